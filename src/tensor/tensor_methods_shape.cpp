// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Tensor method forms of vnn/shape_ops.h and vnn/products.h (the block
// "shape ops" of include/vnn/tensor.h): each the free function of the same
// name with *this as its first argument.
#include "vnn/products.h"
#include "vnn/shape_ops.h"

namespace vnn {

Tensor Tensor::flip(const Dims& dims) const { return vnn::flip(*this, dims); }
Tensor Tensor::fliplr() const { return vnn::fliplr(*this); }
Tensor Tensor::flipud() const { return vnn::flipud(*this); }
Tensor Tensor::roll(const Dims& shifts, const Dims& dims) const { return vnn::roll(*this, shifts, dims); }
Tensor Tensor::rot90(int64_t k, const Dims& dims) const { return vnn::rot90(*this, k, dims); }
Tensor Tensor::repeat(const Dims& repeats) const { return vnn::repeat(*this, repeats); }
Tensor Tensor::tile(const Dims& dims) const { return vnn::tile(*this, dims); }
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  return vnn::repeat_interleave(*this, repeats, dim);
}
Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim) const {
  return vnn::repeat_interleave(*this, repeats, dim);
}
std::vector<Tensor> Tensor::unbind(int dim) const { return vnn::unbind(*this, dim); }
Tensor Tensor::movedim(const Dims& source, const Dims& destination) const {
  return vnn::movedim(*this, source, destination);
}
Tensor Tensor::moveaxis(const Dims& source, const Dims& destination) const {
  return vnn::moveaxis(*this, source, destination);
}
Tensor Tensor::swapaxes(int axis0, int axis1) const { return vnn::swapaxes(*this, axis0, axis1); }
Tensor Tensor::swapdims(int dim0, int dim1) const { return vnn::swapdims(*this, dim0, dim1); }
Tensor Tensor::ravel() const { return vnn::ravel(*this); }
Tensor Tensor::narrow_copy(int dim, int64_t start, int64_t length) const {
  return vnn::narrow_copy(*this, dim, start, length);
}
Tensor Tensor::diag(int64_t diagonal) const { return vnn::diag(*this, diagonal); }
Tensor Tensor::diagonal(int64_t offset, int dim1, int dim2) const { return vnn::diagonal(*this, offset, dim1, dim2); }
Tensor Tensor::diag_embed(int64_t offset, int dim1, int dim2) const {
  return vnn::diag_embed(*this, offset, dim1, dim2);
}
Tensor Tensor::diagflat(int64_t offset) const { return vnn::diagflat(*this, offset); }
Tensor Tensor::trace() const { return vnn::trace(*this); }
std::vector<Tensor> Tensor::tensor_split(int64_t sections, int dim) const {
  return vnn::tensor_split(*this, sections, dim);
}
std::vector<Tensor> Tensor::tensor_split(const std::vector<int64_t>& indices, int dim) const {
  return vnn::tensor_split(*this, indices, dim);
}
std::vector<Tensor> Tensor::hsplit(int64_t sections) const { return vnn::hsplit(*this, sections); }
std::vector<Tensor> Tensor::hsplit(const std::vector<int64_t>& indices) const { return vnn::hsplit(*this, indices); }
std::vector<Tensor> Tensor::vsplit(int64_t sections) const { return vnn::vsplit(*this, sections); }
std::vector<Tensor> Tensor::vsplit(const std::vector<int64_t>& indices) const { return vnn::vsplit(*this, indices); }
std::vector<Tensor> Tensor::dsplit(int64_t sections) const { return vnn::dsplit(*this, sections); }
std::vector<Tensor> Tensor::dsplit(const std::vector<int64_t>& indices) const { return vnn::dsplit(*this, indices); }
Tensor Tensor::outer(const Tensor& vec2) const { return vnn::outer(*this, vec2); }
Tensor Tensor::ger(const Tensor& vec2) const { return vnn::ger(*this, vec2); }
Tensor Tensor::inner(const Tensor& other) const { return vnn::inner(*this, other); }
Tensor Tensor::kron(const Tensor& other) const { return vnn::kron(*this, other); }
Tensor Tensor::cross(const Tensor& other, std::optional<int64_t> dim) const { return vnn::cross(*this, other, dim); }
Tensor Tensor::cov(int64_t correction, const Tensor& fweights, const Tensor& aweights) const {
  return vnn::cov(*this, correction, fweights, aweights);
}
Tensor Tensor::corrcoef() const { return vnn::corrcoef(*this); }
Tensor Tensor::take(const Tensor& index) const { return vnn::take(*this, index); }
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return vnn::take_along_dim(*this, indices, dim);
}
Tensor Tensor::index_copy(int dim, const Tensor& index, const Tensor& source) const {
  return vnn::index_copy(*this, dim, index, source);
}
Tensor& Tensor::index_copy_(int dim, const Tensor& index, const Tensor& source) {
  return vnn::index_copy_(*this, dim, index, source);
}
Tensor Tensor::index_fill(int dim, const Tensor& index, double value) const {
  return vnn::index_fill(*this, dim, index, value);
}
Tensor& Tensor::index_fill_(int dim, const Tensor& index, double value) {
  return vnn::index_fill_(*this, dim, index, value);
}
Tensor Tensor::select_scatter(const Tensor& src, int dim, int64_t index) const {
  return vnn::select_scatter(*this, src, dim, index);
}
Tensor Tensor::slice_scatter(const Tensor& src, int dim, std::optional<int64_t> start, std::optional<int64_t> end,
                             int64_t step) const {
  return vnn::slice_scatter(*this, src, dim, start, end, step);
}
Tensor Tensor::diagonal_scatter(const Tensor& src, int64_t offset, int dim1, int dim2) const {
  return vnn::diagonal_scatter(*this, src, offset, dim1, dim2);
}

}  // namespace vnn
