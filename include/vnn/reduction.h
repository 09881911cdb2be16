// Reductions and softmax, with PyTorch's names and semantics.
//  - dims: any subset of the tensor's dims (negative counts from the end);
//    an empty list reduces every dim. keepdim keeps reduced dims as size 1.
//  - sum / prod of integer or bool tensors give int64; of floats the input
//    dtype (float32 accumulates in float64 inside the kernel).
//  - mean needs a floating dtype (convert integers with .to(vnn::kFloat32)).
//  - max / min / argmax / argmin of an empty reduction throw IndexError.
#pragma once
#include <cstdint>
#include <tuple>
#include <vector>

#include "vnn/tensor.h"

namespace vnn {

Tensor sum(const Tensor& t);
Tensor sum(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor sum(const Tensor& t, int dim, bool keepdim = false);
Tensor mean(const Tensor& t);
Tensor mean(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& t, int dim, bool keepdim = false);
Tensor prod(const Tensor& t);
Tensor prod(const Tensor& t, int dim, bool keepdim = false);

// Largest / smallest values over dims (no indices).
Tensor amax(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// The whole tensor's max / min (a 0-dim tensor).
Tensor max(const Tensor& t);
Tensor min(const Tensor& t);
// Values and int64 indices along one dim: auto [v, i] = vnn::max(t, 1);
std::tuple<Tensor, Tensor> max(const Tensor& t, int dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& t, int dim, bool keepdim = false);
// Index of the first largest / smallest element (of the flattened tensor,
// or along dim). NaN counts as the largest and the smallest.
Tensor argmax(const Tensor& t);
Tensor argmax(const Tensor& t, int dim, bool keepdim = false);
Tensor argmin(const Tensor& t);
Tensor argmin(const Tensor& t, int dim, bool keepdim = false);

// Numerically stable softmax / log_softmax along dim (floating dtypes).
Tensor softmax(const Tensor& t, int dim);
Tensor log_softmax(const Tensor& t, int dim);

}  // namespace vnn
