// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// EmbeddingBag (torch::nn::EmbeddingBag) and F::embedding_bag: sums, means
// or maxima of bags of embedding rows without materialising the rows per bag:
//   vnn::nn::EmbeddingBag bag(vnn::nn::EmbeddingBagOptions(1000, 64).mode(vnn::nn::kSum));
//   auto y = bag(indices, offsets);                    // indices [T], offsets [B]: y [B, 64]
//   auto z = bag(indices_2d);                          // [B, L]: one bag per row
// Sum and mean are one gather and one index_add; max gathers into a padded
// [B, longest bag, D] block and reduces it. All are existing ops, so every
// device runs them and autograd flows to the weight (and per_sample_weights).
#pragma once
#include <optional>
#include <string>

#include "vnn/nn/loss.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn::nn {

/// EmbeddingBag's max mode (LibTorch's torch::kMax).
struct MaxMode {};
/// mode "max" of EmbeddingBag.
inline constexpr MaxMode kMax{};
/// The modes of EmbeddingBag: kSum, kMean (default) or kMax.
struct EmbeddingBagMode {
  /// The reduction of each bag.
  enum Kind { sum, mean, max };
  /// kSum or kMean (kNone: ValueError).
  EmbeddingBagMode(Reduction r);  // NOLINT: implicit, as LibTorch's variant
  /// kMax.
  EmbeddingBagMode(MaxMode) : kind(max) {}  // NOLINT: implicit, as LibTorch's variant
  /// Which reduction.
  Kind kind = mean;
};

/// Options of EmbeddingBag: sizes, mode, include_last_offset, padding_idx.
struct EmbeddingBagOptions {
  /// A table of `num_embeddings` vectors of `embedding_dim` values.
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  /// Number of rows.
  VNN_ARG(int64_t, num_embeddings);
  /// Length of each vector.
  VNN_ARG(int64_t, embedding_dim);
  /// How each bag is reduced (default kMean).
  VNN_ARG(EmbeddingBagMode, mode) = kMean;
  /// offsets has B + 1 entries, the last the end of the last bag (CSR style).
  VNN_ARG(bool, include_last_offset) = false;
  /// A row that starts at zero and is left out of every bag (and of the mean's count).
  VNN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

namespace functional {
/// Options of embedding_bag: offsets, per_sample_weights, mode, include_last_offset, padding_idx.
struct EmbeddingBagFuncOptions {
  /// Start of each bag in a 1-D input (int64 [B], or [B + 1] with include_last_offset).
  VNN_ARG(Tensor, offsets);
  /// A weight per index (input's shape; kSum only).
  VNN_ARG(Tensor, per_sample_weights);
  /// How each bag is reduced (default kMean).
  VNN_ARG(EmbeddingBagMode, mode) = kMean;
  /// offsets' last entry ends the last bag.
  VNN_ARG(bool, include_last_offset) = false;
  /// Indices equal to this are left out of every bag.
  VNN_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
/// The bags of weight [num_embeddings, D] rows given by int64 `input`: [B, L]
/// (one bag per row, no offsets) or [T] with offsets: [B, D]. Empty bags
/// give zeros. ValueError / ShapeError / IndexError for bad offsets, modes
/// and indices.
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& options = {});
}  // namespace functional

/// Bags of embeddings reduced by sum, mean or max (torch.nn.EmbeddingBag);
/// key "weight" [num_embeddings, embedding_dim], initialised N(0, 1).
class EmbeddingBagImpl : public Cloneable<EmbeddingBagImpl> {
 public:
  /// An EmbeddingBag from options (ValueError for sizes below 1 or padding_idx out of range).
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& options, Generator* gen = nullptr);
  /// Re-creates the table (N(0, 1), the padding row zero).
  void reset() override;
  /// functional::embedding_bag(input, weight, ...) with this module's options.
  Tensor forward(const Tensor& input, const Tensor& offsets = Tensor(), const Tensor& per_sample_weights = Tensor());
  std::string describe() const override;
  /// The options the layer was built with.
  EmbeddingBagOptions options;
  /// The table, [num_embeddings, embedding_dim].
  Tensor weight;

 private:
  Generator* gen_ = nullptr;
};
/// The holder of EmbeddingBagImpl.
VNN_MODULE(EmbeddingBag);

}  // namespace vnn::nn
