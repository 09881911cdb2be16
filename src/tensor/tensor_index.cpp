// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LibTorch's indexing conveniences on Tensor: t[i], slice, index({...}),
// index_put_, t() and mT(). All are views (or writes through views) built
// on select / narrow / unsqueeze / transpose, plus one strided slice view.
#include <string>

#include "autograd/autograd.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn {

namespace indexing {
TensorIndex::TensorIndex(const char* ellipsis) : kind_(Kind::ellipsis) {
  if (!ellipsis || std::string(ellipsis) != "...")
    VNN_THROW(ValueError, "TensorIndex: the only string index is \"...\" (Ellipsis), got \"",
              (ellipsis ? ellipsis : "(null)"), "\"");
}
}  // namespace indexing

Tensor Tensor::operator[](int64_t index) const {
  VNN_CHECK(IndexError, dim() != 0, "operator[]: a 0-dim tensor cannot be indexed (index ", index,
            "); use item() to read its value");
  return select(0, index);
}

Tensor Tensor::slice(int d, std::optional<int64_t> start_in, std::optional<int64_t> end_in, int64_t step) const {
  d = detail::normalize_dim(d, dim(), "slice");
  VNN_CHECK(IndexError, dim() != 0, "slice: a 0-dim tensor cannot be sliced");
  if (step <= 0)
    VNN_THROW(ValueError, "slice: step must be positive, got ", step, " (dimension ", d, " of size ", sizes()[d], ")");
  int64_t n = sizes()[d];
  // Python's rules: negative bounds count from the end, then clamp to [0, n].
  auto bound = [n](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t b = *v < 0 ? *v + n : *v;
    return b < 0 ? int64_t(0) : (b > n ? n : b);
  };
  int64_t start = bound(start_in, 0), end = bound(end_in, n);
  int64_t length = end > start ? (end - start + step - 1) / step : 0;
  Shape sz = sizes(), st = strides();
  sz[d] = length;
  st[d] = strides()[d] * step;
  Shape in_sizes = sizes();
  Tensor view = detail::view_of(*this, sz, st, storage_offset() + start * strides()[d]);
  detail::record_view("SliceBackward", view, *this, [in_sizes, d, start, step](const Tensor& g) {
    return detail::place_along(g, in_sizes, d, start, step, true);
  });
  return view;
}

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return index(std::vector<indexing::TensorIndex>(indices));
}

Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const {
  using Kind = indexing::TensorIndex::Kind;
  int consumed = 0, ellipses = 0;
  for (auto& i : indices) {
    if (i.kind() == Kind::integer || i.kind() == Kind::slice) ++consumed;
    if (i.kind() == Kind::ellipsis) ++ellipses;
  }
  if (ellipses > 1) VNN_THROW(IndexError, "index: an index can only have a single ellipsis ('...')");
  if (consumed > dim())
    VNN_THROW(IndexError, "index: too many indices for a tensor of dimension ", dim(), " (shape ", sizes(), "): got ",
              consumed);
  Tensor r = *this;
  int d = 0;     // the dim of r the next index applies to
  int orig = 0;  // the same dim counted in *this, for messages
  for (auto& i : indices) {
    switch (i.kind()) {
      case Kind::integer: {
        int64_t n = r.sizes()[d], v = i.integer();
        if (v < -n || v >= n)
          VNN_THROW(IndexError, "index: index ", v, " is out of bounds for dimension ", orig, " with size ", n,
                    " (shape ", sizes(), ")");
        r = r.select(d, v);
        ++orig;
        break;
      }
      case Kind::slice: {
        const indexing::Slice& s = i.slice();
        int64_t step = s.step.value_or(1);
        if (step <= 0)
          VNN_THROW(ValueError, "index: slice step must be positive, got ", step, " for dimension ", orig,
                    " with size ", r.sizes()[d]);
        r = r.slice(d, s.start, s.stop, step);
        ++d;
        ++orig;
        break;
      }
      case Kind::none:
        r = r.unsqueeze(d);
        ++d;
        break;
      case Kind::ellipsis: {
        int skip = dim() - consumed;
        d += skip;
        orig += skip;
        break;
      }
    }
  }
  return r;
}

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value) {
  index(indices).copy_(value);
  return *this;
}

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, double value) {
  index(indices).fill_(value);
  return *this;
}

Tensor Tensor::t() const {
  if (dim() > 2)
    VNN_THROW(ShapeError, "t: expects a tensor of at most 2 dimensions, got ", dim(), " (shape ", sizes(),
              "); use mT() or transpose(dim0, dim1)");
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::mT() const {
  if (dim() < 2)
    VNN_THROW(ShapeError, "mT: expects a tensor of at least 2 dimensions, got ", dim(), " (shape ", sizes(), ")");
  return transpose(-2, -1);
}

}  // namespace vnn
