// Reductions and softmax, with PyTorch's names and semantics.
//  - dims: any subset of the tensor's dims (negative counts from the end);
//    an empty list reduces every dim. keepdim keeps reduced dims as size 1.
//  - sum / prod of integer or bool tensors give int64; of floats the input
//    dtype (float32 accumulates in float64 inside the kernel).
//  - mean needs a floating dtype (convert integers with .to(vnn::kFloat32)).
//  - max / min / argmax / argmin of an empty reduction throw IndexError.
#pragma once
#include <cstdint>
#include <string>
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

// Variance / standard deviation over dims: sum((x - mean)^2) / (N -
// correction), computed in two passes (numerically stable). correction 1 is
// the unbiased (Bessel) estimate, 0 the population one; N - correction <= 0
// gives inf or nan, like PyTorch. Floating dtypes only. PyTorch's
// unbiased=true/false is correction 1/0 (a bool converts to that).
// Call it vnn::std (as torch::std): after `using namespace vnn`, a bare
// std(...) is ambiguous with namespace std; std::vector etc. are unaffected.
// The one-dim overload takes the same (correction, keepdim) so that
// var(t, {1}, 0) is never ambiguous between the two.
Tensor var(const Tensor& t, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor var(const Tensor& t, int dim, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& t, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& t, int dim, int64_t correction = 1, bool keepdim = false);

// Vector p-norm over dims (all dims when empty): p = 1, 2, any p > 0,
// INFINITY (max |x|), -INFINITY (min |x|), 0 (count of non-zeros); "fro" is
// the 2-norm over the given dims. Floating dtypes only.
Tensor norm(const Tensor& t, double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor norm(const Tensor& t, const std::string& p, const std::vector<int64_t>& dims = {}, bool keepdim = false);

// log(sum(exp(x))) over dims, shifted by the maximum (never overflows);
// integer inputs give float32; an empty reduction gives -inf.
Tensor logsumexp(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor logsumexp(const Tensor& t, int dim, bool keepdim = false);

// Whether any / all elements are non-zero (NaN counts as non-zero); any
// dtype in, bool out. Empty reductions: any() false, all() true.
Tensor any(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor any(const Tensor& t, int dim, bool keepdim = false);
Tensor all(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor all(const Tensor& t, int dim, bool keepdim = false);

// Numerically stable softmax / log_softmax along dim (floating dtypes).
Tensor softmax(const Tensor& t, int dim);
Tensor log_softmax(const Tensor& t, int dim);

}  // namespace vnn
