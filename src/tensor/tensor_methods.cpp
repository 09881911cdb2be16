// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Tensor method forms (the block "LibTorch's method forms" of
// include/vnn/tensor.h): each the free function of the same name with *this
// as its first argument.
#include "vnn/elementwise.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/random.h"
#include "vnn/reduction.h"
#include "vnn/scan.h"
#include "vnn/sorting.h"
#include "vnn/tensor.h"

namespace vnn {

Tensor Tensor::add(const Tensor& other, double alpha) const { return vnn::add(*this, other, alpha); }
Tensor Tensor::add(double other) const { return vnn::add(*this, other); }
Tensor Tensor::sub(const Tensor& other, double alpha) const { return vnn::sub(*this, other, alpha); }
Tensor Tensor::sub(double other) const { return vnn::sub(*this, other); }
Tensor Tensor::mul(const Tensor& other) const { return vnn::mul(*this, other); }
Tensor Tensor::mul(double other) const { return vnn::mul(*this, other); }
Tensor Tensor::div(const Tensor& other) const { return vnn::div(*this, other); }
Tensor Tensor::div(double other) const { return vnn::div(*this, other); }
Tensor Tensor::div(const Tensor& other, const std::string& mode) const { return vnn::div(*this, other, mode); }
Tensor Tensor::div(double other, const std::string& mode) const { return vnn::div(*this, other, mode); }
Tensor Tensor::pow(const Tensor& exponent) const { return vnn::pow(*this, exponent); }
Tensor Tensor::pow(double exponent) const { return vnn::pow(*this, exponent); }
Tensor Tensor::square() const { return vnn::mul(*this, *this); }
Tensor Tensor::new_zeros(const Shape& shape) const { return vnn::zeros(shape, TensorOptions(device()).with(dtype())); }
Tensor Tensor::new_ones(const Shape& shape) const { return vnn::ones(shape, TensorOptions(device()).with(dtype())); }
Tensor Tensor::new_full(const Shape& shape, double value) const {
  return vnn::full(shape, value, TensorOptions(device()).with(dtype()));
}
Tensor Tensor::new_empty(const Shape& shape) const { return vnn::empty(shape, TensorOptions(device()).with(dtype())); }
Tensor Tensor::half() const { return to(kFloat16); }
Tensor Tensor::bfloat16() const { return to(kBFloat16); }
Tensor Tensor::maximum(const Tensor& other) const { return vnn::maximum(*this, other); }
Tensor Tensor::minimum(const Tensor& other) const { return vnn::minimum(*this, other); }
Tensor Tensor::clamp(double min, double max) const { return vnn::clamp(*this, min, max); }
Tensor Tensor::clamp_min(double min) const { return vnn::clamp_min(*this, min); }
Tensor Tensor::clamp_max(double max) const { return vnn::clamp_max(*this, max); }
Tensor Tensor::eq(const Tensor& other) const { return vnn::eq(*this, other); }
Tensor Tensor::eq(double other) const { return vnn::eq(*this, other); }
Tensor Tensor::ne(const Tensor& other) const { return vnn::ne(*this, other); }
Tensor Tensor::ne(double other) const { return vnn::ne(*this, other); }
Tensor Tensor::lt(const Tensor& other) const { return vnn::lt(*this, other); }
Tensor Tensor::lt(double other) const { return vnn::lt(*this, other); }
Tensor Tensor::le(const Tensor& other) const { return vnn::le(*this, other); }
Tensor Tensor::le(double other) const { return vnn::le(*this, other); }
Tensor Tensor::gt(const Tensor& other) const { return vnn::gt(*this, other); }
Tensor Tensor::gt(double other) const { return vnn::gt(*this, other); }
Tensor Tensor::ge(const Tensor& other) const { return vnn::ge(*this, other); }
Tensor Tensor::ge(double other) const { return vnn::ge(*this, other); }
Tensor Tensor::logical_and(const Tensor& other) const { return vnn::logical_and(*this, other); }
Tensor Tensor::logical_or(const Tensor& other) const { return vnn::logical_or(*this, other); }
Tensor Tensor::logical_xor(const Tensor& other) const { return vnn::logical_xor(*this, other); }
Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return vnn::isclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return vnn::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return vnn::equal(*this, other); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const { return vnn::where(condition, *this, other); }
Tensor Tensor::where(const Tensor& condition, double other) const { return vnn::where(condition, *this, other); }
Tensor Tensor::masked_fill(const Tensor& mask, double value) const { return vnn::masked_fill(*this, mask, value); }
Tensor Tensor::tril(int64_t diagonal) const { return vnn::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return vnn::triu(*this, diagonal); }
Tensor Tensor::sum() const { return vnn::sum(*this); }
Tensor Tensor::sum(const Dims& dims, bool keepdim) const { return vnn::sum(*this, dims, keepdim); }
Tensor Tensor::mean() const { return vnn::mean(*this); }
Tensor Tensor::mean(const Dims& dims, bool keepdim) const { return vnn::mean(*this, dims, keepdim); }
Tensor Tensor::prod() const { return vnn::prod(*this); }
Tensor Tensor::prod(int dim, bool keepdim) const { return vnn::prod(*this, dim, keepdim); }
Tensor Tensor::max() const { return vnn::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int dim, bool keepdim) const { return vnn::max(*this, dim, keepdim); }
Tensor Tensor::max(const Tensor& other) const { return vnn::maximum(*this, other); }
Tensor Tensor::min() const { return vnn::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int dim, bool keepdim) const { return vnn::min(*this, dim, keepdim); }
Tensor Tensor::min(const Tensor& other) const { return vnn::minimum(*this, other); }
Tensor Tensor::amax(const Dims& dims, bool keepdim) const { return vnn::amax(*this, dims, keepdim); }
Tensor Tensor::amin(const Dims& dims, bool keepdim) const { return vnn::amin(*this, dims, keepdim); }
Tensor Tensor::argmax() const { return vnn::argmax(*this); }
Tensor Tensor::argmax(int dim, bool keepdim) const { return vnn::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin() const { return vnn::argmin(*this); }
Tensor Tensor::argmin(int dim, bool keepdim) const { return vnn::argmin(*this, dim, keepdim); }
Tensor Tensor::var(const Dims& dims, int64_t correction, bool keepdim) const {
  return vnn::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(const Dims& dims, int64_t correction, bool keepdim) const {
  return vnn::std(*this, dims, correction, keepdim);
}
Tensor Tensor::norm(double p, const Dims& dims, bool keepdim) const { return vnn::norm(*this, p, dims, keepdim); }
Tensor Tensor::logsumexp(const Dims& dims, bool keepdim) const { return vnn::logsumexp(*this, dims, keepdim); }
Tensor Tensor::any(const Dims& dims, bool keepdim) const { return vnn::any(*this, dims, keepdim); }
Tensor Tensor::all(const Dims& dims, bool keepdim) const { return vnn::all(*this, dims, keepdim); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int dim, bool largest, bool sorted) const {
  return vnn::topk(*this, k, dim, largest, sorted);
}
std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return vnn::sort(*this, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::sort(bool stable, int64_t dim, bool descending) const {
  return vnn::sort(*this, stable, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const { return vnn::argsort(*this, dim, descending); }
Tensor Tensor::argsort(bool stable, int64_t dim, bool descending) const {
  return vnn::argsort(*this, stable, dim, descending);
}
Tensor Tensor::msort() const { return vnn::msort(*this); }
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return vnn::kthvalue(*this, k, dim, keepdim);
}
Tensor Tensor::median() const { return vnn::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const { return vnn::median(*this, dim, keepdim); }
Tensor Tensor::nanmedian() const { return vnn::nanmedian(*this); }
std::tuple<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim) const {
  return vnn::nanmedian(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::mode(int64_t dim, bool keepdim) const { return vnn::mode(*this, dim, keepdim); }
Tensor Tensor::quantile(double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) const {
  return vnn::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::quantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                        const std::string& interpolation) const {
  return vnn::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(double q, std::optional<int64_t> dim, bool keepdim,
                           const std::string& interpolation) const {
  return vnn::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                           const std::string& interpolation) const {
  return vnn::nanquantile(*this, q, dim, keepdim, interpolation);
}
std::tuple<Tensor, Tensor, Tensor> Tensor::unique(bool sorted, bool return_inverse, bool return_counts) const {
  return vnn::unique(*this, sorted, return_inverse, return_counts);
}
std::tuple<Tensor, Tensor, Tensor> Tensor::unique_consecutive(bool return_inverse, bool return_counts) const {
  return vnn::unique_consecutive(*this, return_inverse, return_counts);
}
Tensor Tensor::bincount(const Tensor& weights, int64_t minlength) const {
  return vnn::bincount(*this, weights, minlength);
}
Tensor Tensor::histc(int64_t bins, double min, double max) const { return vnn::histc(*this, bins, min, max); }
Tensor Tensor::softmax(int dim) const { return vnn::softmax(*this, dim); }
Tensor Tensor::log_softmax(int dim) const { return vnn::log_softmax(*this, dim); }
Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype) const { return vnn::cumsum(*this, dim, dtype); }
Tensor& Tensor::cumsum_(int64_t dim, std::optional<DType> dtype) { return vnn::cumsum_(*this, dim, dtype); }
Tensor Tensor::cumprod(int64_t dim, std::optional<DType> dtype) const { return vnn::cumprod(*this, dim, dtype); }
Tensor& Tensor::cumprod_(int64_t dim, std::optional<DType> dtype) { return vnn::cumprod_(*this, dim, dtype); }
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return vnn::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return vnn::cummin(*this, dim); }
Tensor Tensor::logcumsumexp(int64_t dim) const { return vnn::logcumsumexp(*this, dim); }
Tensor Tensor::nonzero() const { return vnn::nonzero(*this); }
std::vector<Tensor> Tensor::nonzero_numpy() const { return vnn::nonzero_numpy(*this); }
Tensor Tensor::argwhere() const { return vnn::argwhere(*this); }
Tensor Tensor::count_nonzero(const Dims& dims) const { return vnn::count_nonzero(*this, dims); }
Tensor Tensor::masked_select(const Tensor& mask) const { return vnn::masked_select(*this, mask); }
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return vnn::masked_scatter(*this, mask, source);
}
Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  return vnn::masked_scatter_(*this, mask, source);
}
Tensor Tensor::nansum(const Dims& dims, bool keepdim) const { return vnn::nansum(*this, dims, keepdim); }
Tensor Tensor::nanmean(const Dims& dims, bool keepdim) const { return vnn::nanmean(*this, dims, keepdim); }
std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> dim, bool keepdim) const {
  return vnn::aminmax(*this, dim, keepdim);
}
Tensor Tensor::matmul(const Tensor& other) const { return vnn::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& mat2) const { return vnn::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return vnn::bmm(*this, mat2); }
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, double beta, double alpha) const {
  return vnn::addmm(*this, mat1, mat2, beta, alpha);
}
Tensor Tensor::index_select(int dim, const Tensor& index) const { return vnn::index_select(*this, dim, index); }
Tensor Tensor::gather(int dim, const Tensor& index) const { return vnn::gather(*this, dim, index); }
Tensor Tensor::scatter(int dim, const Tensor& index, const Tensor& src) const {
  return vnn::scatter(*this, dim, index, src);
}
Tensor& Tensor::scatter_(int dim, const Tensor& index, const Tensor& src) {
  return vnn::scatter_(*this, dim, index, src);
}
Tensor Tensor::scatter_add(int dim, const Tensor& index, const Tensor& src) const {
  return vnn::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_add_(int dim, const Tensor& index, const Tensor& src) {
  return vnn::scatter_add_(*this, dim, index, src);
}
Tensor Tensor::index_add(int dim, const Tensor& index, const Tensor& src, double alpha) const {
  return vnn::index_add(*this, dim, index, src, alpha);
}
Tensor& Tensor::index_add_(int dim, const Tensor& index, const Tensor& src, double alpha) {
  return vnn::index_add_(*this, dim, index, src, alpha);
}
Tensor& Tensor::uniform_(double from, double to, Generator* gen) { return vnn::uniform_(*this, from, to, gen); }
Tensor& Tensor::normal_(double mean, double std, Generator* gen) { return vnn::normal_(*this, mean, std, gen); }
Tensor Tensor::multinomial(int64_t num_samples, bool replacement, Generator* gen) const {
  return vnn::multinomial(*this, num_samples, replacement, gen);
}
Tensor Tensor::view_as(const Tensor& other) const { return view(other.sizes()); }
Tensor Tensor::reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
Tensor Tensor::expand_as(const Tensor& other) const { return expand(other.sizes()); }
Tensor Tensor::type_as(const Tensor& other) const { return to(other.dtype()); }
TensorOptions Tensor::options() const { return TensorOptions(device()).dtype(dtype()); }

}  // namespace vnn
