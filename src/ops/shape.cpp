// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shape views (squeeze, unsqueeze, broadcast_to, flatten, unflatten,
// split, chunk) and the joins cat / stack, which copy each input into a
// narrow() view of one result.
#include <algorithm>
#include <string>

#include "autograd/autograd.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/checked_size.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/indexing.h"

namespace vnn {

namespace {

// squeeze / unsqueeze / flatten / unflatten keep the element order, so
// their gradient is the incoming one reshaped back.
Tensor view_of(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset) {
  Tensor v = detail::view_of(t, sizes, strides, offset);
  Shape in_sizes = t.sizes();
  detail::record_view("ReshapeViewBackward", v, t, [in_sizes](const Tensor& g) { return g.reshape(in_sizes); });
  return v;
}

// A dim for an op that inserts one: [-(ndim+1), ndim].
int normalize_new_dim(int dim, int ndim, const char* op) {
  if (dim < -(ndim + 1) || dim > ndim)
    VNN_THROW(IndexError, op, ": dimension ", dim, " is out of range for a result of ", ndim + 1,
              " dimensions (expected in [", -(ndim + 1), ", ", ndim, "])");
  return dim < 0 ? dim + ndim + 1 : dim;
}

}  // namespace

Tensor Tensor::squeeze() const {
  Shape sz, st;
  for (int i = 0; i < dim(); ++i)
    if (sizes()[i] != 1) {
      sz.push_back(sizes()[i]);
      st.push_back(strides()[i]);
    }
  return view_of(*this, sz, st, storage_offset());
}

Tensor Tensor::squeeze(int d) const {
  d = detail::normalize_dim(d, dim(), "squeeze");
  if (dim() == 0 || sizes()[d] != 1) return view_of(*this, sizes(), strides(), storage_offset());
  Shape sz, st;
  for (int i = 0; i < dim(); ++i)
    if (i != d) {
      sz.push_back(sizes()[i]);
      st.push_back(strides()[i]);
    }
  return view_of(*this, sz, st, storage_offset());
}

Tensor Tensor::unsqueeze(int d) const {
  int n = dim();
  if (n >= kMaxDims)
    VNN_THROW(ShapeError, "unsqueeze: tensor of shape ", sizes(), " already has the maximum of ", kMaxDims,
              " dimensions");
  d = normalize_new_dim(d, n, "unsqueeze");
  Shape sz, st;
  for (int i = 0; i <= n; ++i) {
    if (i == d) {
      sz.push_back(1);
      // Any stride is valid for a size-1 dim; this one keeps contiguity.
      int64_t keep = 1;
      if (d < n && !checked::mul(strides()[d], sizes()[d], &keep)) keep = 1;
      st.push_back(keep);
    }
    if (i < n) {
      sz.push_back(sizes()[i]);
      st.push_back(strides()[i]);
    }
  }
  return view_of(*this, sz, st, storage_offset());
}

Tensor Tensor::broadcast_to(const Shape& shape) const {
  int n = shape.size(), m = dim();
  Shape target = shape;
  for (int i = 0; i < n; ++i) {
    int j = i - (n - m);
    if (target[i] == -1 && j >= 0) target[i] = sizes()[j];
    if (target[i] < 0)
      VNN_THROW(ShapeError, "broadcast_to: invalid size ", shape[i], " at dimension ", i, " of ", shape.str());
  }
  if (n < m || broadcast_shapes(sizes(), target, "broadcast_to") != target)
    VNN_THROW(ShapeError, "broadcast_to: tensor of shape ", sizes(), " cannot be broadcast to shape ", shape.str());
  return expand(target);
}

Tensor Tensor::flatten(int start_dim, int end_dim) const {
  int n = dim();
  if (n == 0) return reshape({1});
  int s = detail::normalize_dim(start_dim, n, "flatten"), e = detail::normalize_dim(end_dim, n, "flatten");
  if (s > e)
    VNN_THROW(IndexError, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim, " for a tensor of shape ",
              sizes());
  int64_t merged = 1;
  for (int i = s; i <= e; ++i) merged *= sizes()[i];  // fits: a tensor's sizes multiply within int64
  // The merged dims form one strided run when each steps over the next.
  bool viewable = true;
  int64_t inner = strides()[e];
  for (int i = e; i >= s; --i) {
    if (sizes()[i] == 1) continue;
    if (strides()[i] != inner) viewable = false;
    if (!checked::mul(strides()[i], sizes()[i], &inner)) viewable = false;  // as_strided strides
  }
  Shape sz, st;
  int64_t run_stride = 1;
  for (int i = e; i >= s; --i)
    if (sizes()[i] != 1) {
      run_stride = strides()[i];
      break;
    }
  for (int i = 0; i < n; ++i) {
    if (i > s && i <= e) continue;
    sz.push_back(i == s ? merged : sizes()[i]);
    st.push_back(i == s ? run_stride : strides()[i]);
  }
  if (viewable || merged == 0) return view_of(*this, sz, st, storage_offset());
  return contiguous().flatten(start_dim, end_dim);
}

Tensor Tensor::unflatten(int d, const Shape& parts) const {
  d = detail::normalize_dim(d, dim(), "unflatten");
  int64_t have = dim() == 0 ? 1 : sizes()[d];
  VNN_CHECK(ShapeError, parts.size() != 0, "unflatten: sizes must be non-empty");
  if (dim() - 1 + parts.size() > kMaxDims)
    VNN_THROW(ShapeError, "unflatten: result of ", dim() - 1 + parts.size(), " dimensions exceeds the maximum of ",
              kMaxDims);
  Shape got = parts;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < parts.size(); ++i) {
    if (parts[i] == -1 && infer < 0) {
      infer = i;
    } else if (parts[i] < 0) {
      VNN_THROW(ShapeError, "unflatten: invalid sizes ", parts.str());
    } else if (!checked::mul(known, parts[i], &known)) {
      VNN_THROW(ValueError, "unflatten: sizes ", parts.str(), " multiply to ", parts.approx_numel(),
                ", more than an int64 index can address (dimension ", d, " has size ", have, ")");
    }
  }
  if (infer >= 0) got[infer] = known == 0 ? 0 : have / known;
  if (got.numel() != have || (infer >= 0 && known == 0))
    VNN_THROW(ShapeError, "unflatten: sizes ", parts.str(), " don't multiply up to the size ", have, " of dimension ",
              d, " (tensor ", sizes(), ")");
  if (dim() == 0) return reshape(got);
  Shape sz, st;
  for (int i = 0; i < dim(); ++i) {
    if (i != d) {
      sz.push_back(sizes()[i]);
      st.push_back(strides()[i]);
      continue;
    }
    Shape local;
    local.resize(got.size());
    int64_t acc = strides()[d];
    for (int k = got.size() - 1; k >= 0; --k) {
      local[k] = acc;
      VNN_CHECK(ValueError, checked::mul(acc, got[k], &acc), "unflatten: strides of the result overflow int64 (tensor ",
                sizes(), ", strides ", strides(), ")");
    }
    for (int k = 0; k < got.size(); ++k) {
      sz.push_back(got[k]);
      st.push_back(local[k]);
    }
  }
  return view_of(*this, sz, st, storage_offset());
}

std::vector<Tensor> Tensor::split(int64_t split_size, int d) const {
  d = detail::normalize_dim(d, dim(), "split");
  VNN_CHECK(ShapeError, dim() != 0, "split: a 0-dimensional tensor cannot be split");
  int64_t n = sizes()[d];
  if (split_size < 0 || (split_size == 0 && n != 0))
    VNN_THROW(ValueError, "split: split_size must be positive, got ", split_size, " for dimension ", d, " of size ", n);
  std::vector<Tensor> out;
  if (n == 0) {
    out.push_back(narrow(d, 0, 0));
    return out;
  }
  for (int64_t s = 0; s < n; s += split_size) out.push_back(narrow(d, s, std::min(split_size, n - s)));
  return out;
}

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& parts, int d) const {
  d = detail::normalize_dim(d, dim(), "split");
  VNN_CHECK(ShapeError, dim() != 0, "split: a 0-dimensional tensor cannot be split");
  int64_t n = sizes()[d], total = 0;
  for (int64_t p : parts) {
    if (p < 0) VNN_THROW(ValueError, "split: split sizes must be non-negative, got ", Shape(parts).str());
    VNN_CHECK(ValueError, checked::add(total, p, &total), "split: split sizes ", Shape(parts).str(), " sum past int64");
  }
  VNN_CHECK(ShapeError, total == n, "split: split sizes ", Shape(parts).str(), " sum to ", total, ", but dimension ", d,
            " of a tensor of shape ", sizes(), " has size ", n);
  std::vector<Tensor> out;
  int64_t s = 0;
  for (int64_t p : parts) {
    out.push_back(narrow(d, s, p));
    s += p;
  }
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int d) const {
  if (chunks <= 0) VNN_THROW(ValueError, "chunk: chunks must be positive, got ", chunks);
  d = detail::normalize_dim(d, dim(), "chunk");
  VNN_CHECK(ShapeError, dim() != 0, "chunk: a 0-dimensional tensor cannot be chunked");
  int64_t n = sizes()[d];
  return split(n == 0 ? 0 : (n + chunks - 1) / chunks, d);
}

Tensor squeeze(const Tensor& t) { return t.squeeze(); }
Tensor squeeze(const Tensor& t, int dim) { return t.squeeze(dim); }
Tensor unsqueeze(const Tensor& t, int dim) { return t.unsqueeze(dim); }
Tensor broadcast_to(const Tensor& t, const Shape& shape) { return t.broadcast_to(shape); }
Tensor flatten(const Tensor& t, int start_dim, int end_dim) { return t.flatten(start_dim, end_dim); }
Tensor unflatten(const Tensor& t, int dim, const Shape& sizes) { return t.unflatten(dim, sizes); }
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int dim) { return t.split(split_size, dim); }
std::vector<Tensor> split(const Tensor& t, const std::vector<int64_t>& sizes, int dim) { return t.split(sizes, dim); }
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int dim) { return t.chunk(chunks, dim); }

Tensor cat(const std::vector<Tensor>& tensors, int dim) {
  VNN_CHECK(ValueError, !tensors.empty(), "cat: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i)
    VNN_CHECK(ValueError, tensors[i].defined(), "cat: tensors[", int64_t(i), "] is an undefined tensor");
  // PyTorch's legacy rule: 1-D empty tensors join anything.
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; };
  int ref = -1;
  DType dt = tensors[0].dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i > 0) dt = promote_types(dt, tensors[i].dtype());
    std::string arg = "tensors[" + std::to_string(i) + "]";
    detail::check_same_device(tensors[0], tensors[i], "cat", arg.c_str());
    if (ref < 0 && !skipped(tensors[i])) ref = int(i);
  }
  if (ref < 0) return detail::make_empty(tensors[0].impl()->ctx(), {0}, dt);
  const Tensor& r = tensors[size_t(ref)];
  VNN_CHECK(ShapeError, r.dim() != 0, "cat: zero-dimensional tensor tensors[", ref, "] cannot be concatenated");
  int d = detail::normalize_dim(dim, r.dim(), "cat");
  Shape shape = r.sizes();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    bool ok = t.dim() == r.dim();
    for (int k = 0; ok && k < r.dim(); ++k) ok = k == d || t.sizes()[k] == r.sizes()[k];
    VNN_CHECK(ShapeError, ok, "cat: sizes of tensors must match except in dimension ", d, ": tensors[", ref,
              "] has shape ", r.sizes(), " but tensors[", int64_t(i), "] has shape ", t.sizes());
    VNN_CHECK(ValueError, checked::add(total, t.sizes()[d], &total), "cat: sizes along dimension ", d,
              " sum past int64 (tensors[", int64_t(i), "] has shape ", t.sizes(), ")");
  }
  shape[d] = total;
  Tensor out = detail::make_empty(r.impl()->ctx(), shape, dt, "cat");
  int64_t at = 0;
  {
    autograd::NoGradGuard no_grad;  // one node for the whole cat, below
    for (const Tensor& t : tensors) {
      if (skipped(t)) continue;
      int64_t len = t.sizes()[d];
      if (len > 0) out.narrow(d, at, len).copy_(t);
      at += len;
    }
  }
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : tensors) inputs.push_back(&t);
  bool any_grad = std::any_of(tensors.begin(), tensors.end(), [](const Tensor& t) { return t.requires_grad(); });
  if (any_grad && autograd::grad_enabled() && is_floating(dt)) {
    std::vector<std::pair<int64_t, int64_t>> ranges;  // (start, length) per input; length -1: skipped
    std::vector<DType> dtypes;
    int64_t pos = 0;
    for (const Tensor& t : tensors) {
      dtypes.push_back(t.dtype());
      ranges.emplace_back(pos, skipped(t) ? -1 : t.sizes()[d]);
      if (!skipped(t)) pos += t.sizes()[d];
    }
    detail::record("cat", out, inputs, [ranges, dtypes, d](const Tensor& g) {
      std::vector<Tensor> grads;
      for (size_t i = 0; i < ranges.size(); ++i)
        grads.push_back(ranges[i].second < 0 || !is_floating(dtypes[i])
                            ? Tensor()
                            : g.narrow(d, ranges[i].first, ranges[i].second).to(dtypes[i]));
      return grads;
    }, {}, /*twice_differentiable=*/true);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int dim) {
  VNN_CHECK(ValueError, !tensors.empty(), "stack: expected a non-empty list of tensors");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    VNN_CHECK(ValueError, tensors[i].defined(), "stack: tensors[", int64_t(i), "] is an undefined tensor");
    VNN_CHECK(ShapeError, tensors[i].sizes() == tensors[0].sizes(),
              "stack: expects each tensor to be equal size, but tensors[0] has shape ", tensors[0].sizes(),
              " and tensors[", int64_t(i), "] has shape ", tensors[i].sizes());
  }
  int d = normalize_new_dim(dim, tensors[0].dim(), "stack");
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
  return cat(parts, d);
}

}  // namespace vnn
