// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Diagonals, index grids and scatter-by-position (vnn/shape_ops.h):
// diagonal is a strided view; index_copy, select_scatter and slice_scatter
// are one scatter along a dim whose index is a stride-0 view of the
// positions; diagonal_scatter and diag_embed one scatter at the diagonal's
// flat positions, computed on the host; the grids and products of indices
// are host-built index tensors fed to index_select.
// No kernel of their own: every device runs them, autograd follows scatter,
// gather and index_select.
#include <algorithm>
#include <string>

#include "autograd/autograd.hpp"
#include "autograd/elementwise_grad.hpp"
#include "ops/shape_common.hpp"
#include "vnn/checked_size.h"
#include "vnn/creation.h"
#include "vnn/elementwise.h"
#include "vnn/indexing.h"
#include "vnn/reduction.h"
#include "vnn/shape_ops.h"

namespace vnn {

namespace {

// The storage positions of the elements of a strided view (sizes, strides,
// first element at `offset`), in row-major order.
std::vector<int64_t> strided_positions(const Shape& sizes, const Shape& strides, int64_t offset) {
  int64_t n = sizes.numel();
  int nd = sizes.size();
  std::vector<int64_t> pos, at(size_t(nd), 0);
  detail::check_host_bytes(n, sizeof(int64_t), "scatter positions");
  pos.reserve(size_t(n));
  int64_t p = offset;
  for (int64_t e = 0; e < n; ++e) {
    pos.push_back(p);
    for (int k = nd - 1; k >= 0; --k) {
      p += strides[k];
      if (++at[size_t(k)] < sizes[k]) break;
      p -= strides[k] * sizes[k];
      at[size_t(k)] = 0;
    }
  }
  return pos;
}

// The flat positions of view's elements, row-major, relative to element 0
// of a contiguous tensor starting at storage offset `base`.
std::vector<int64_t> view_positions(const Tensor& view, int64_t base) {
  return strided_positions(view.sizes(), view.strides(), view.storage_offset() - base);
}

// A copy of self with src's elements written at flat positions `pos` of
// self's row-major layout: one clone and one scatter of src's elements (the
// out-of-place copy plus the writes), differentiable in self and src.
Tensor scatter_at(const Tensor& self, const std::vector<int64_t>& pos, const Tensor& src) {
  Tensor flat = self.reshape({-1});
  if (pos.empty()) return self.clone();
  Tensor values = src.to(self.dtype()).reshape({-1});
  return scatter(flat, 0, detail::index_on(pos, self.device()), values).view(self.sizes());
}

// Runs f, prefixing a shape, index or value error with the public op's name.
template <class F>
auto with_op_name(const char* op, F&& f) {
  try {
    return f();
  } catch (const IndexError& e) {
    VNN_THROW(IndexError, op, ": ", e.what());
  } catch (const ShapeError& e) {
    VNN_THROW(ShapeError, op, ": ", e.what());
  } catch (const ValueError& e) {
    VNN_THROW(ValueError, op, ": ", e.what());
  }
}

// ShapeError unless src has the shape of the part of self that `pick`
// selects (pick's own errors prefixed with op).
void check_view_shape(const Tensor& self, const Tensor& src, const char* op,
                 const std::function<Tensor(const Tensor&)>& pick) {
  detail::require_arg(self, op, "input");
  detail::require_arg(src, op, "src");
  detail::check_same_device(self, src, op, "src");
  autograd::NoGradGuard no_grad;
  Shape target = with_op_name(op, [&] { return pick(self.detach()).sizes(); });
  VNN_CHECK(ShapeError, src.sizes() == target, op, ": expected src to have the shape ", target,
            " of the part of input ", self.sizes(), " it replaces, got ", src.sizes());
}

// self with src written at the view `pick` makes of it (the diagonal), at
// the view's flat positions.
Tensor scatter_into_view(const Tensor& self, const Tensor& src, const char* op,
                         const std::function<Tensor(const Tensor&)>& pick) {
  check_view_shape(self, src, op, pick);
  Tensor base = self.contiguous();
  Tensor target;
  {
    autograd::NoGradGuard no_grad;
    target = pick(base.detach());
  }
  return scatter_at(base, view_positions(target, base.storage_offset()), src);
}

// A copy of self with source.select(d, i) written at self.select(d, at[i])
// (positions checked by the caller): one clone and one scatter whose index
// is a stride-0 view of the 1-D positions, never materialised.
Tensor scatter_along(const Tensor& self, int d, const std::vector<int64_t>& at, const Tensor& source) {
  if (at.empty()) return self.clone();
  Tensor s = self.dim() == 0 ? self.reshape({1}) : self;
  Tensor src = source.dim() == 0 ? source.reshape({1}) : source;
  Shape along(std::vector<int64_t>(size_t(src.dim()), 1));
  along[d] = int64_t(at.size());
  Tensor idx = detail::index_on(at, self.device()).view(along).expand(src.sizes());
  Tensor out = scatter(s, d, idx, src);
  return self.dim() == 0 ? out.reshape({}) : out;
}

}  // namespace

// ---- diagonals and windows -----------------------------------------------------

Tensor unfold(const Tensor& t, int dim, int64_t size, int64_t step) {
  detail::require_arg(t, "unfold", "input");
  int d = detail::wrap_dim(dim, t.dim(), "unfold");
  int64_t n = t.dim() == 0 ? 1 : t.size(d);
  if (step <= 0) VNN_THROW(ValueError, "unfold: step must be positive, got ", step);
  if (size < 0 || size > n)
    VNN_THROW(ShapeError, "unfold: size ", size, " must be in [0, ", n, "], the size of dimension ", d, " of shape ",
              t.sizes());
  if (t.dim() == 0) return t.reshape({1}).narrow(0, 0, size);  // PyTorch's: the window alone
  VNN_CHECK(ShapeError, t.dim() < kMaxDims, "unfold: a tensor of shape ", t.sizes(), " already has ", kMaxDims,
            " dims, the most a window dim can be added to");
  Shape sz = t.sizes(), st = t.strides();
  int64_t dim_stride = st[d];
  sz[d] = (n - size) / step + 1;
  st[d] = dim_stride * step;
  sz.push_back(size);
  st.push_back(dim_stride);
  Tensor view = detail::view_of(t, sz, st, t.storage_offset(), "unfold");
  // The gradient: every window element added back at its input position
  // (windows overlap when step < size), one index_add into zeros.
  Shape in_sizes = t.sizes(), in_strides = detail::contiguous_strides(in_sizes);
  Shape pos_strides = in_strides;
  pos_strides[d] = in_strides[d] * step;
  pos_strides.push_back(in_strides[d]);
  detail::record_view("UnfoldBackward", view, t, [in_sizes, sz, pos_strides](const Tensor& g) {
    Tensor flat = zeros({in_sizes.numel()}, TensorOptions(g.device()).with(g.dtype()));
    std::vector<int64_t> pos = strided_positions(sz, pos_strides, 0);
    if (!pos.empty()) flat = index_add(flat, 0, detail::index_on(pos, g.device()), g.reshape({-1}));
    return flat.view(in_sizes);
  });
  return view;
}


Tensor diagonal(const Tensor& t, int64_t offset, int dim1, int dim2) {
  detail::require_arg(t, "diagonal", "input");
  VNN_CHECK(ShapeError, t.dim() >= 2, "diagonal: input must have at least 2 dimensions, got shape ", t.sizes());
  int d1 = detail::wrap_dim(dim1, t.dim(), "diagonal"), d2 = detail::wrap_dim(dim2, t.dim(), "diagonal");
  VNN_CHECK(ValueError, d1 != d2, "diagonal: dim1 and dim2 must differ, both name dimension ", d1, " of shape ",
            t.sizes());
  int64_t n1 = t.size(d1), n2 = t.size(d2), len = 0;
  if (offset >= 0) len = offset >= n2 ? 0 : std::min(n1, n2 - offset);
  else len = offset <= -n1 ? 0 : std::min(n1 + offset, n2);
  int64_t at = t.storage_offset();
  if (len > 0) at += offset >= 0 ? offset * t.stride(d2) : -offset * t.stride(d1);
  Shape sz, st;
  for (int i = 0; i < t.dim(); ++i)
    if (i != d1 && i != d2) {
      sz.push_back(t.size(i));
      st.push_back(t.stride(i));
    }
  sz.push_back(len);
  st.push_back(t.stride(d1) + t.stride(d2));
  Tensor view = detail::view_of(t, sz, st, at, "diagonal");
  Shape in_sizes = t.sizes();
  detail::record_view("DiagonalBackward", view, t, [in_sizes, offset, d1, d2](const Tensor& g) {
    return diagonal_scatter(zeros(in_sizes, TensorOptions(g.device()).with(g.dtype())), g, offset, d1, d2);
  }, /*twice_differentiable=*/false);
  return view;
}

Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int dim1, int dim2) {
  return scatter_into_view(self, src, "diagonal_scatter",
                           [&](const Tensor& b) { return diagonal(b, offset, dim1, dim2); });
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int dim, int64_t index) {
  const char* op = "select_scatter";
  check_view_shape(self, src, op, [&](const Tensor& b) { return b.select(dim, index); });
  int d = detail::wrap_dim(dim, self.dim(), op);
  int64_t at = index < 0 ? index + self.size(d) : index;
  return scatter_along(self, d, {at}, src.to(self.dtype()).unsqueeze(d));
}

Tensor slice_scatter(const Tensor& self, const Tensor& src, int dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  const char* op = "slice_scatter";
  check_view_shape(self, src, op, [&](const Tensor& b) { return b.slice(dim, start, end, step); });
  int d = detail::wrap_dim(dim, self.dim(), op);
  // The positions the slice covers, by Python's rules (those of Tensor::slice).
  std::vector<int64_t> at = arange(self.size(d), kInt64).slice(0, start, end, step).to_vector<int64_t>();
  return scatter_along(self, d, at, src.to(self.dtype()));
}

Tensor diag_embed(const Tensor& t, int64_t offset, int dim1, int dim2) {
  detail::require_arg(t, "diag_embed", "input");
  int nd = t.dim() + 1;
  VNN_CHECK(ShapeError, t.dim() >= 1 && nd <= kMaxDims, "diag_embed: input must have 1 to ", kMaxDims - 1,
            " dimensions, got shape ", t.sizes());
  int d1 = detail::wrap_dim(dim1, nd, "diag_embed"), d2 = detail::wrap_dim(dim2, nd, "diag_embed");
  VNN_CHECK(ValueError, d1 != d2, "diag_embed: dim1 and dim2 must differ, both name dimension ", d1);
  int64_t n = t.size(-1), side = 0;
  VNN_CHECK(ValueError, checked::add(n, offset < 0 ? -(offset + 1) + 1 : offset, &side), "diag_embed: offset ",
            offset, " makes the result's side overflow int64");
  Shape out;
  for (int i = 0, k = 0; i < nd; ++i) out.push_back(i == d1 || i == d2 ? side : t.size(k++));
  return diagonal_scatter(zeros(out, t.options()), t, offset, d1, d2);
}

Tensor diag(const Tensor& t, int64_t diagonal_index) {
  detail::require_arg(t, "diag", "input");
  VNN_CHECK(ShapeError, t.dim() == 1 || t.dim() == 2, "diag: input must be 1-D or 2-D, got shape ", t.sizes());
  if (t.dim() == 1) return diag_embed(t, diagonal_index, 0, 1);
  return diagonal(t, diagonal_index, 0, 1).clone();
}

Tensor diagflat(const Tensor& t, int64_t offset) {
  detail::require_arg(t, "diagflat", "input");
  return diag_embed(t.flatten(), offset, 0, 1);
}

Tensor trace(const Tensor& t) {
  detail::require_arg(t, "trace", "input");
  VNN_CHECK(ShapeError, t.dim() == 2, "trace: expected a matrix, got shape ", t.sizes());
  return sum(diagonal(t, 0, 0, 1));
}

namespace {
Tensor triangle_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& opt, bool lower,
                        const char* op) {
  if (row < 0 || col < 0) VNN_THROW(ValueError, op, ": row and col must be non-negative, got ", row, " and ", col);
  std::vector<int64_t> rows, cols;
  offset = std::clamp(offset, -row - 1, col + 1);  // the same triangle, and i + offset cannot overflow
  int64_t cells = 0;
  VNN_CHECK(ValueError, checked::mul(row, col, &cells), op, ": a ", row, " x ", col, " matrix overflows int64");
  detail::check_host_bytes(cells, 2 * sizeof(int64_t), op);
  for (int64_t i = 0; i < row; ++i) {
    // Columns kept in row i: j - i <= offset (lower) or j - i >= offset (upper), clamped to [0, col).
    int64_t lo = lower ? 0 : std::max<int64_t>(0, std::min(col, i + offset));
    int64_t hi = lower ? std::max<int64_t>(0, std::min(col, i + offset + 1)) : col;
    for (int64_t j = lo; j < hi; ++j) {
      rows.push_back(i);
      cols.push_back(j);
    }
  }
  int64_t n = int64_t(rows.size());
  rows.insert(rows.end(), cols.begin(), cols.end());
  DType dt = opt.dtype_or(kInt64);
  return from_vector(rows, {2, n}, opt.device()).to(dt);
}
}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& options) {
  return triangle_indices(row, col, offset, options, true, "tril_indices");
}
Tensor triu_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& options) {
  return triangle_indices(row, col, offset, options, false, "triu_indices");
}

Tensor block_diag(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return empty({1, 0});
  DType dt = tensors[0].defined() ? tensors[0].dtype() : kFloat32;
  int64_t cols = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::require_arg(tensors[i], "block_diag", "tensors");
    VNN_CHECK(ShapeError, tensors[i].dim() <= 2, "block_diag: input tensors must have 2 or fewer dimensions, tensors[",
              int64_t(i), "] has shape ", tensors[i].sizes());
    detail::check_same_device(tensors[0], tensors[i], "block_diag", "tensors");
    dt = promote_types(dt, tensors[i].dtype());
    VNN_CHECK(ValueError, checked::add(cols, atleast_2d(tensors[i]).size(1), &cols), "block_diag: columns overflow int64");
  }
  // Each block row is cat(zeros, block, zeros) and the rows are cat'ed: two
  // copy passes, the blocks never move elementwise.
  std::vector<Tensor> rows;
  int64_t left = 0;
  TensorOptions opt = TensorOptions(tensors[0].device()).with(dt);
  for (const Tensor& t : tensors) {
    Tensor b = atleast_2d(t).to(dt);
    int64_t r = b.size(0), c = b.size(1);
    rows.push_back(cat({zeros({r, left}, opt), b, zeros({r, cols - left - c}, opt)}, 1));
    left += c;
  }
  return cat(rows, 0);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  VNN_CHECK(ValueError, !tensors.empty(), "meshgrid: expected a non-empty list of tensors");
  VNN_CHECK(ValueError, indexing == "ij" || indexing == "xy", "meshgrid: indexing must be \"ij\" or \"xy\", got \"",
            indexing, "\"");
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::require_arg(tensors[i], "meshgrid", "tensors");
    VNN_CHECK(ShapeError, tensors[i].dim() <= 1, "meshgrid: expects 0-D or 1-D tensors, tensors[", int64_t(i),
              "] has shape ", tensors[i].sizes());
    VNN_CHECK(DTypeError, tensors[i].dtype() == tensors[0].dtype(), "meshgrid: expects one dtype, tensors[0] is ",
              name(tensors[0].dtype()), " and tensors[", int64_t(i), "] is ", name(tensors[i].dtype()));
    detail::check_same_device(tensors[0], tensors[i], "meshgrid", "tensors");
  }
  VNN_CHECK(ShapeError, int(tensors.size()) <= kMaxDims, "meshgrid: ", int64_t(tensors.size()),
            " tensors make grids of more than ", kMaxDims, " dimensions");
  bool xy = indexing == "xy" && tensors.size() >= 2;
  std::vector<Tensor> in = tensors;
  if (xy) std::swap(in[0], in[1]);
  Shape grid;
  for (const Tensor& t : in) grid.push_back(t.numel());
  std::vector<Tensor> out;
  int n = int(in.size());
  for (int i = 0; i < n; ++i) {
    Shape one(std::vector<int64_t>(size_t(n), 1));
    one[i] = in[size_t(i)].numel();
    out.push_back(in[size_t(i)].reshape(one).expand(grid));
  }
  if (xy) std::swap(out[0], out[1]);
  return out;
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  VNN_CHECK(ValueError, !tensors.empty(), "cartesian_prod: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::require_arg(tensors[i], "cartesian_prod", "tensors");
    VNN_CHECK(ShapeError, tensors[i].dim() == 1, "cartesian_prod: expects 1-D tensors, tensors[", int64_t(i),
              "] has shape ", tensors[i].sizes());
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = with_op_name("cartesian_prod", [&] { return meshgrid(tensors, "ij"); });
  // stack writes each output element once; the reshape of its result is a view.
  return stack(grids, -1).reshape({-1, int64_t(tensors.size())});
}

Tensor combinations(const Tensor& t, int64_t r, bool with_replacement) {
  detail::require_arg(t, "combinations", "input");
  VNN_CHECK(ShapeError, t.dim() == 1, "combinations: expects a 1-D tensor, got shape ", t.sizes());
  if (r < 0) VNN_THROW(ValueError, "combinations: r must be non-negative, got ", r);
  int64_t n = t.size(0);
  // No combinations: an empty selection, still in the graph.
  if (r == 0) return index_select(t, 0, detail::index_on({}, t.device()));
  if (with_replacement ? n == 0 : r > n) return index_select(t, 0, detail::index_on({}, t.device())).view({0, r});
  // The count, C(m, r) with m = n (or n + r - 1 with replacement), sizes the host index up front.
  int64_t m = 0, count = 1, cells = 0;
  bool fits = checked::add(n, with_replacement ? r - 1 : 0, &m);
  for (int64_t i = 1, k = std::min(r, m - r); fits && i <= k; ++i) {
    fits = checked::mul(count, m - k + i, &count);
    count /= i;
  }
  VNN_CHECK(ValueError, fits && checked::mul(count, r, &cells), "combinations: the ", r, "-combinations of ", n,
            " elements are more than an int64 index can count");
  detail::check_host_bytes(cells, sizeof(int64_t), "combinations");
  std::vector<int64_t> picks, at(size_t(r), 0);
  picks.reserve(size_t(cells));
  // itertools' order: the last position advances fastest, positions never decrease.
  for (int64_t i = 0; i < r; ++i) at[size_t(i)] = with_replacement ? 0 : i;
  for (;;) {
    picks.insert(picks.end(), at.begin(), at.end());
    int64_t i = r - 1;
    while (i >= 0 && at[size_t(i)] == (with_replacement ? n - 1 : n - r + i)) --i;
    if (i < 0) break;
    ++at[size_t(i)];
    for (int64_t j = i + 1; j < r; ++j) at[size_t(j)] = with_replacement ? at[size_t(i)] : at[size_t(j - 1)] + 1;
  }
  return index_select(t, 0, detail::index_on(picks, t.device())).view({int64_t(picks.size()) / r, r});
}

// ---- indexing by position ----------------------------------------------------------

namespace {
// index's values as positions in the flattened t: checked, negative ones counted from the end.
std::vector<int64_t> flat_positions(const Tensor& t, const Tensor& index, const char* op) {
  detail::require_arg(t, op, "input");
  std::vector<int64_t> at = detail::host_integers(index, op, "index");
  detail::check_same_device(t, index, op, "index");
  int64_t n = t.numel();
  for (int64_t& i : at) {
    if (i < -n || i >= n)
      VNN_THROW(IndexError, op, ": index ", i, " is out of range for a tensor of ", n, " elements (shape ", t.sizes(),
                ")");
    if (i < 0) i += n;
  }
  return at;
}
}  // namespace

Tensor take(const Tensor& t, const Tensor& index) {
  std::vector<int64_t> at = flat_positions(t, index, "take");
  return index_select(t.reshape({-1}), 0, detail::index_on(at, t.device())).view(index.sizes());
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  std::vector<int64_t> at = flat_positions(self, index, "put");
  detail::require_arg(source, "put", "source");
  detail::check_same_device(self, source, "put", "source");
  VNN_CHECK(DTypeError, source.dtype() == self.dtype(), "put: self (", name(self.dtype()), ") and source (",
            name(source.dtype()), ") must have the same dtype");
  VNN_CHECK(ShapeError, index.numel() == source.numel(), "put: index of shape ", index.sizes(),
            " and source of shape ", source.sizes(), " must have as many elements");
  Tensor flat = self.reshape({-1}), values = source.reshape({-1});
  if (!accumulate) return scatter_along(flat, 0, at, values).view(self.sizes());
  if (at.empty()) return self.clone();
  return index_add(flat, 0, detail::index_on(at, self.device()), values).view(self.sizes());
}

Tensor& put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  Tensor result = put(self, index, source, accumulate);
  return detail::inplace_with_grad(self, "put_", [&](const Tensor&) { return result; });
}

std::vector<Tensor> unravel_index(const Tensor& indices, const Shape& shape) {
  std::vector<int64_t> flat = detail::host_integers(indices, "unravel_index", "indices");
  for (int64_t s : shape)
    if (s < 0) VNN_THROW(ValueError, "unravel_index: shape ", shape, " cannot have negative sizes");
  int64_t total = 0;
  VNN_CHECK(ValueError, checked::numel(shape.data(), shape.size(), &total), "unravel_index: shape ", shape,
            " has more elements than int64 can count");
  std::vector<std::vector<int64_t>> coords(size_t(shape.size()), std::vector<int64_t>(flat.size()));
  for (size_t e = 0; e < flat.size(); ++e) {
    int64_t i = flat[e];
    if (i < -total || i >= total)
      VNN_THROW(IndexError, "unravel_index: index ", i, " is out of range for shape ", shape, " (", total,
                " elements)");
    if (i < 0) i += total;
    for (int k = shape.size() - 1; k >= 0; --k) {
      coords[size_t(k)][e] = i % shape[k];
      i /= shape[k];
    }
  }
  std::vector<Tensor> out;
  for (const auto& c : coords) out.push_back(from_vector(c, indices.sizes(), indices.device()));
  return out;
}

Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim) {
  detail::require_arg(t, "take_along_dim", "input");
  detail::require_arg(indices, "take_along_dim", "indices");
  VNN_CHECK(DTypeError, indices.dtype() == kInt64 || indices.dtype() == kInt32,
            "take_along_dim: indices must be int64 or int32, got ", name(indices.dtype()));
  detail::check_same_device(t, indices, "take_along_dim", "indices");
  // Negative indices count from the end, as PyTorch's; gather checks the rest.
  auto wrapped = [](const Tensor& idx, int64_t n) {
    Tensor i = idx.to(kInt64);
    return where(lt(i, 0.0), add(i, full_like(i, double(n))), i);
  };
  if (!dim)
    return with_op_name("take_along_dim",
                        [&] { return gather(t.reshape({-1}), 0, wrapped(indices.reshape({-1}), t.numel())); });
  VNN_CHECK(ShapeError, t.dim() == indices.dim(), "take_along_dim: input of shape ", t.sizes(),
            " and indices of shape ", indices.sizes(), " must have the same number of dimensions");
  int d = detail::wrap_dim(*dim, t.dim(), "take_along_dim");
  if (t.dim() == 0) return with_op_name("take_along_dim", [&] { return gather(t, 0, wrapped(indices, 1)); });
  Shape self_sizes = t.sizes();
  self_sizes[d] = indices.size(d);
  Shape common = with_op_name("take_along_dim",
                              [&] { return broadcast_shapes(self_sizes, indices.sizes(), "take_along_dim"); });
  Tensor idx = wrapped(indices, t.size(d)).expand(common);
  common[d] = t.size(d);
  // Broadcast views into one gather pass: only the index is written (wrapped).
  return with_op_name("take_along_dim", [&] { return gather(t.expand(common), d, idx); });
}

namespace {
// self and source as gather/scatter see them: 0-D counts as [1].
struct IndexCopyArgs {
  Shape self_sizes;
  int dim;
  std::vector<int64_t> index;
};

IndexCopyArgs check_index_args(const Tensor& self, int dim, const Tensor& index, const char* op, bool negative_ok) {
  detail::require_arg(self, op, "self");
  VNN_CHECK(ShapeError, index.defined() && index.dim() <= 1, op, ": index must be 0-D or 1-D, got shape ",
            index.defined() ? index.sizes().str() : std::string("(undefined)"));
  VNN_CHECK(DTypeError, index.dtype() == kInt64 || index.dtype() == kInt32, op, ": index must be int64 or int32, got ",
            name(index.dtype()));
  detail::check_same_device(self, index, op, "index");
  IndexCopyArgs a;
  a.self_sizes = self.dim() == 0 ? Shape{1} : self.sizes();
  a.dim = detail::wrap_dim(dim, self.dim(), op);
  a.index = detail::host_integers(index, op, "index");
  int64_t n = a.self_sizes[a.dim];
  for (int64_t& i : a.index) {
    if (i >= n || i < (negative_ok ? -n : 0))
      VNN_THROW(IndexError, op, ": index ", i, " is out of bounds for dimension ", a.dim, " with size ", n);
    if (i < 0) i += n;
  }
  return a;
}
}  // namespace

Tensor index_copy(const Tensor& self, int dim, const Tensor& index, const Tensor& source) {
  IndexCopyArgs a = check_index_args(self, dim, index, "index_copy", false);
  detail::require_arg(source, "index_copy", "source");
  detail::check_same_device(self, source, "index_copy", "source");
  VNN_CHECK(DTypeError, source.dtype() == self.dtype(), "index_copy: self (", name(self.dtype()), ") and source (",
            name(source.dtype()), ") must have the same dtype");
  Shape src = source.dim() == 0 ? Shape{1} : source.sizes();
  bool ok = src.size() == a.self_sizes.size() && src[a.dim] == int64_t(a.index.size());
  for (int k = 0; ok && k < src.size(); ++k) ok = k == a.dim || src[k] == a.self_sizes[k];
  VNN_CHECK(ShapeError, ok, "index_copy: source of shape ", source.sizes(), " does not fit self of shape ",
            self.sizes(), " with ", int64_t(a.index.size()), " indices along dimension ", a.dim,
            " (source must equal self except size ", int64_t(a.index.size()), " there)");
  return scatter_along(self, a.dim, a.index, source);
}

Tensor& index_copy_(Tensor& self, int dim, const Tensor& index, const Tensor& source) {
  Tensor result = index_copy(self, dim, index, source);
  return detail::inplace_with_grad(self, "index_copy_", [&](const Tensor&) { return result; });
}

namespace {
// A bool mask over dim d, true at the indexed positions, shaped to broadcast against self.
Tensor index_mask(const Tensor& self, const IndexCopyArgs& a) {
  std::vector<uint8_t> hit(size_t(a.self_sizes[a.dim]), 0);
  for (int64_t i : a.index) hit[size_t(i)] = 1;
  Shape shape(std::vector<int64_t>(size_t(self.dim()), 1));
  if (self.dim() > 0) shape[a.dim] = a.self_sizes[a.dim];
  return from_vector(hit, {int64_t(hit.size())}, self.device()).to(kBool).reshape(shape);
}
}  // namespace

Tensor index_fill(const Tensor& self, int dim, const Tensor& index, double value) {
  IndexCopyArgs a = check_index_args(self, dim, index, "index_fill", true);
  return masked_fill(self, index_mask(self, a), value);
}

Tensor& index_fill_(Tensor& self, int dim, const Tensor& index, double value) {
  IndexCopyArgs a = check_index_args(self, dim, index, "index_fill_", true);
  return self.masked_fill_(index_mask(self, a), value);
}

Tensor index_fill(const Tensor& self, int dim, const Tensor& index, const Tensor& value) {
  IndexCopyArgs a = check_index_args(self, dim, index, "index_fill", true);
  detail::require_arg(value, "index_fill", "value");
  VNN_CHECK(ShapeError, value.dim() == 0, "index_fill: value must be a 0-dim tensor, got shape ", value.sizes());
  detail::check_same_device(self, value, "index_fill", "value");
  // where keeps both gradients: self's outside the mask, value's summed inside it.
  return where(index_mask(self, a), value.to(self.dtype()), self);
}

Tensor& index_fill_(Tensor& self, int dim, const Tensor& index, const Tensor& value) {
  Tensor result = index_fill(self, dim, index, value);
  return detail::inplace_with_grad(self, "index_fill_", [&](const Tensor&) { return result; });
}

}  // namespace vnn
