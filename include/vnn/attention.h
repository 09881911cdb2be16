// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Scaled dot-product attention with PyTorch 2.x's semantics
// (torch.nn.functional.scaled_dot_product_attention).
//  - query [..., L, E], key [..., S, E], value [..., S, Ev]; the leading
//    dims broadcast; the one before L is the heads dim (Hq for the query,
//    Hk for key/value; enable_gqa lets Hk divide Hq).
//  - attn_mask: bool (true = attend) or an additive float mask of the
//    query's dtype, broadcastable to [..., L, S].
//  - is_causal: key j > query i is masked (top-left aligned, as PyTorch);
//    not together with attn_mask.
//  - scale: 1/sqrt(E) by default. dropout_p > 0 drops attention weights with
//    Philox numbers from `generator` (the default one when null): one seed
//    gives one mask on every device and path.
//  - A row with no key to attend gives 0 (PyTorch's safe softmax).
// Paths: the backend's fused kernel (VNN_OP_SDPA, FlashAttention-2 style,
// O(N*H*L) memory beyond inputs and output) when it takes the request, else
// the core's math path (matmul, softmax, dropout; materialises [.., L, S]).
// The profiler names them "sdpa[flash]" and "sdpa[math]"; VNN_SDPA=math
// (or an SdpaKernelGuard) forces the math path. Differentiable in query,
// key, value and a float mask; under autocast on the lower-precision list.
#pragma once
#include <optional>

#include "vnn/tensor.h"

namespace vnn {

class Generator;  // vnn/random.h

/// Attention softmax(q k^T * scale + mask) v with PyTorch 2.x's arguments and semantics.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false, Generator* generator = nullptr);

/// Which implementation scaled_dot_product_attention may use (torch.nn.attention.SDPBackend).
enum class SDPBackend {
  automatic,  ///< the fused kernel where the backend takes the request, else the math path
  flash,      ///< the fused kernel only: Unsupported where the backend declines
  math        ///< the core's composition of matmul, softmax and dropout
};

/// Restricts scaled_dot_product_attention on this thread while alive (torch.nn.attention.sdpa_kernel).
class SdpaKernelGuard {
 public:
  /// Chooses `backend` until destruction; the previous choice comes back then.
  explicit SdpaKernelGuard(SDPBackend backend);
  /// Restores the previous choice.
  ~SdpaKernelGuard();
  /// Not copyable: one scope, one restore.
  SdpaKernelGuard(const SdpaKernelGuard&) = delete;
  /// Not assignable.
  SdpaKernelGuard& operator=(const SdpaKernelGuard&) = delete;

 private:
  SDPBackend previous_;
};

/// The implementation in force on this thread (VNN_SDPA=math sets the default to math).
SDPBackend sdpa_backend();

}  // namespace vnn
