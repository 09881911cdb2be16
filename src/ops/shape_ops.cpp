// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reordering, repetition, dim moves, joins and splits (vnn/shape_ops.h),
// composed of views, cat and index_select: no kernel of their own, so every
// device runs them and autograd follows their parts. The diagonal and
// scatter-by-position ops are in shape_diag.cpp.
#include <algorithm>
#include <string>

#include "ops/shape_common.hpp"
#include "vnn/checked_size.h"
#include "vnn/indexing.h"
#include "vnn/shape_ops.h"

namespace vnn {

namespace detail {

void require_arg(const Tensor& t, const char* op, const char* arg) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument '", arg, "' is an undefined tensor");
}

int wrap_dim(int64_t dim, int ndim, const char* op) {
  int n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n)
    VNN_THROW(IndexError, op, ": dimension ", dim, " is out of range for a tensor of ", ndim,
              " dimensions (expected in [", -n, ", ", n - 1, "])");
  return int(dim < 0 ? dim + n : dim);
}

std::vector<int> wrap_unique_dims(const std::vector<int64_t>& dims, int ndim, const char* op) {
  std::vector<int> out;
  for (int64_t d : dims) {
    int w = detail::wrap_dim(d, ndim, op);
    if (std::find(out.begin(), out.end(), w) != out.end())
      VNN_THROW(ValueError, op, ": dimension ", w, " appears more than once in the list of dims ", Shape(dims).str());
    out.push_back(w);
  }
  return out;
}

Tensor index_on(const std::vector<int64_t>& values, const Device& device) {
  return from_vector(values, {int64_t(values.size())}, device);
}

std::vector<int64_t> host_integers(const Tensor& t, const char* op, const char* arg) {
  detail::require_arg(t, op, arg);
  VNN_CHECK(DTypeError, is_integral(t.dtype()), op, ": expected '", arg, "' to be an integer tensor, got ",
            name(t.dtype()), "; convert it with .to(vnn::kInt64)");
  return t.to(kInt64).to_vector<int64_t>();
}

}  // namespace detail

// ---- reordering -------------------------------------------------------------

Tensor flip(const Tensor& t, const Dims& dims) {
  detail::require_arg(t, "flip", "input");
  std::vector<int> ds = detail::wrap_unique_dims(dims.vec(), t.dim(), "flip");
  // One index_select per flipped dim of length > 1: a gather pass that reads
  // and writes each element once, the floor for a reordering copy.
  Tensor out = t;
  bool copied = false;
  for (int d : ds) {
    if (t.dim() == 0 || t.size(d) <= 1) continue;
    int64_t n = t.size(d);
    std::vector<int64_t> reversed(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) reversed[size_t(i)] = n - 1 - i;
    out = index_select(out, d, detail::index_on(reversed, t.device()));
    copied = true;
  }
  return copied ? out : t.clone();
}

Tensor fliplr(const Tensor& t) {
  detail::require_arg(t, "fliplr", "input");
  VNN_CHECK(ShapeError, t.dim() >= 2, "fliplr: input must have at least 2 dimensions, got shape ", t.sizes());
  return flip(t, 1);
}

Tensor flipud(const Tensor& t) {
  detail::require_arg(t, "flipud", "input");
  VNN_CHECK(ShapeError, t.dim() >= 1, "flipud: input must have at least 1 dimension, got a 0-dim tensor");
  return flip(t, 0);
}

Tensor roll(const Tensor& t, const Dims& shifts, const Dims& dims) {
  detail::require_arg(t, "roll", "input");
  const std::vector<int64_t>& s = shifts.vec();
  const std::vector<int64_t>& d = dims.vec();
  if (d.empty()) {
    VNN_CHECK(ValueError, s.size() == 1, "roll: without dims, shifts must hold one value (the flattened roll), got ",
              Shape(s).str());
    return roll(t.flatten(), s[0], 0).view(t.sizes());
  }
  VNN_CHECK(ValueError, s.size() == d.size(), "roll: shifts ", Shape(s).str(), " and dims ", Shape(d).str(),
            " must have the same length");
  // One cat of two narrow views per rolled dim: a single copy pass each.
  Tensor out = t;
  bool copied = false;
  for (size_t i = 0; i < d.size(); ++i) {
    int k = detail::wrap_dim(d[i], t.dim(), "roll");
    if (t.dim() == 0) continue;
    int64_t n = t.size(k);
    if (n == 0) continue;
    int64_t r = ((s[i] % n) + n) % n;
    if (r == 0) continue;
    out = cat({out.narrow(k, n - r, r), out.narrow(k, 0, n - r)}, k);
    copied = true;
  }
  return copied ? out : t.clone();
}

Tensor rot90(const Tensor& t, int64_t k, const Dims& dims) {
  detail::require_arg(t, "rot90", "input");
  const std::vector<int64_t>& d = dims.vec();
  VNN_CHECK(ValueError, d.size() == 2, "rot90: dims must hold two dims, got ", Shape(d).str());
  VNN_CHECK(ShapeError, t.dim() >= 2, "rot90: input must have at least 2 dimensions, got shape ", t.sizes());
  std::vector<int> w = detail::wrap_unique_dims(d, t.dim(), "rot90");
  switch (((k % 4) + 4) % 4) {
    case 1: return flip(t, w[1]).transpose(w[0], w[1]);
    case 2: return flip(t, {int64_t(w[0]), int64_t(w[1])});
    case 3: return flip(t, w[0]).transpose(w[0], w[1]);
    default: return t.clone();
  }
}

// ---- repetition -------------------------------------------------------------

Tensor repeat(const Tensor& t, const Dims& repeats) {
  detail::require_arg(t, "repeat", "input");
  const std::vector<int64_t>& r = repeats.vec();
  int n = int(r.size());
  VNN_CHECK(ShapeError, n >= t.dim(), "repeat: the number of repeats (", n,
            ") can't be smaller than the number of dimensions of the tensor of shape ", t.sizes());
  VNN_CHECK(ShapeError, n <= kMaxDims, "repeat: ", n, " repeats make a result of more than ", kMaxDims, " dimensions");
  int lead = n - t.dim();
  Shape out_shape;
  for (int i = 0; i < n; ++i) {
    if (r[size_t(i)] < 0) VNN_THROW(ValueError, "repeat: repeats ", Shape(r).str(), " must be non-negative");
    int64_t in = i < lead ? 1 : t.size(i - lead), size = 0;
    VNN_CHECK(ValueError, checked::mul(in, r[size_t(i)], &size), "repeat: repeats ", Shape(r).str(),
              " of a tensor of shape ", t.sizes(), " overflow int64 at dimension ", i);
    out_shape.push_back(size);
  }
  int64_t total = 0;
  VNN_CHECK(ValueError, checked::numel(out_shape.data(), out_shape.size(), &total), "repeat: repeats ",
            Shape(r).str(), " of a tensor of shape ", t.sizes(), " make ", out_shape.approx_numel(),
            " elements, more than int64 can count");
  Tensor x = t;
  for (int i = 0; i < lead; ++i) x = x.unsqueeze(0);
  if (total == 0) return x.reshape({-1}).narrow(0, 0, 0).reshape(out_shape).clone();  // empty, still in the graph
  // Each repeated dim gets a stride-0 axis in front of it; one reshape then
  // copies the expanded view: every output element written once. A view
  // with more than kMaxDims dims is split into two passes.
  std::vector<int64_t> first(size_t(n), 1), rest(size_t(n), 1);
  int extra = 0;
  for (int i = 0; i < n; ++i)
    if (r[size_t(i)] != 1) (n + ++extra <= kMaxDims ? first : rest)[size_t(i)] = r[size_t(i)];
  if (std::any_of(rest.begin(), rest.end(), [](int64_t v) { return v != 1; })) return repeat(repeat(x, first), rest);
  if (extra == 0) return x.clone();
  Shape expanded;
  for (int i = 0; i < n; ++i) {
    if (r[size_t(i)] != 1) expanded.push_back(r[size_t(i)]);
    expanded.push_back(x.size(i));
  }
  Tensor v = x;
  for (int i = 0, at = 0; i < n; ++i, ++at)
    if (r[size_t(i)] != 1) v = v.unsqueeze(at++);
  return v.expand(expanded).reshape(out_shape);
}

Tensor tile(const Tensor& t, const Dims& dims) {
  detail::require_arg(t, "tile", "input");
  std::vector<int64_t> r = dims.vec();
  if (int(r.size()) < t.dim()) r.insert(r.begin(), size_t(t.dim()) - r.size(), 1);
  for (int64_t v : r)
    if (v < 0) VNN_THROW(ValueError, "tile: dims ", Shape(dims.vec()).str(), " must be non-negative");
  return repeat(t, r);
}

namespace {

// Each position i of dim d repeated counts[i] times, as one index_select
// (a gather pass writing each output element once; the index is as long
// as the output's dim d only).
Tensor repeat_positions(const Tensor& x, int d, const std::vector<int64_t>& counts, const char* op) {
  std::vector<int64_t> index;
  int64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) VNN_THROW(ValueError, op, ": repeats must be non-negative, got ", counts[i], " at position ", int64_t(i));
    VNN_CHECK(ValueError, checked::add(total, counts[i], &total), op, ": the repeats sum past int64");
  }
  detail::check_host_bytes(total, sizeof(int64_t), op);
  index.reserve(size_t(total));
  for (size_t i = 0; i < counts.size(); ++i) index.insert(index.end(), size_t(counts[i]), int64_t(i));
  return index_select(x, d, detail::index_on(index, x.device()));
}

}  // namespace

namespace {
void check_output_size(std::optional<int64_t> output_size, int64_t size) {
  if (output_size && *output_size != size)
    VNN_THROW(ValueError, "repeat_interleave: output_size ", *output_size, " differs from the repeated length ", size);
}
}  // namespace

Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  detail::require_arg(t, "repeat_interleave", "input");
  if (repeats < 0) VNN_THROW(ValueError, "repeat_interleave: repeats must be non-negative, got ", repeats);
  Tensor x = dim ? (t.dim() == 0 ? t.reshape({1}) : t) : t.flatten();
  int d = dim ? detail::wrap_dim(*dim, t.dim(), "repeat_interleave") : 0;
  int64_t out = 0;
  VNN_CHECK(ValueError, checked::mul(x.size(d), repeats, &out), "repeat_interleave: ", x.size(d), " x ", repeats,
            " repeats overflow int64 (input ", t.sizes(), ")");
  check_output_size(output_size, out);
  int64_t inner = 1;
  for (int k = d + 1; k < x.dim(); ++k) inner *= x.size(k);
  if (inner == 1 && repeats > 0 && x.dim() < kMaxDims) {
    // Single elements along the innermost dim: an expanded view copied once
    // runs at copy speed, a gather of one element per index would not.
    Tensor v = x.unsqueeze(d + 1);
    Shape sizes = v.sizes();
    sizes[d + 1] = repeats;
    return v.expand(sizes).flatten(d, d + 1);
  }
  return repeat_positions(x, d, std::vector<int64_t>(size_t(x.size(d)), repeats), "repeat_interleave");
}

Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  detail::require_arg(t, "repeat_interleave", "input");
  VNN_CHECK(ShapeError, repeats.defined() && repeats.dim() <= 1, "repeat_interleave: repeats must be 0-D or 1-D, got shape ",
            repeats.defined() ? repeats.sizes().str() : std::string("(undefined)"));
  Tensor x = dim ? (t.dim() == 0 ? t.reshape({1}) : t) : t.flatten();
  int d = dim ? detail::wrap_dim(*dim, t.dim(), "repeat_interleave") : 0;
  std::vector<int64_t> counts = detail::host_integers(repeats, "repeat_interleave", "repeats");
  if (counts.size() == 1) counts.assign(size_t(x.size(d)), counts[0]);
  VNN_CHECK(ShapeError, int64_t(counts.size()) == x.size(d), "repeat_interleave: repeats of shape ", repeats.sizes(),
            " must have one count per position of dimension ", d, " (size ", x.size(d), ", input ", t.sizes(), ")");
  Tensor out = repeat_positions(x, d, counts, "repeat_interleave");
  check_output_size(output_size, out.size(d));
  return out;
}

Tensor repeat_interleave(const Tensor& repeats) {
  VNN_CHECK(ShapeError, repeats.defined() && repeats.dim() <= 1, "repeat_interleave: repeats must be 0-D or 1-D, got shape ",
            repeats.defined() ? repeats.sizes().str() : std::string("(undefined)"));
  std::vector<int64_t> counts = detail::host_integers(repeats, "repeat_interleave", "repeats");
  Tensor positions = arange(int64_t(counts.size()), TensorOptions(repeats.device()).with(kInt64));
  return repeat_positions(positions, 0, counts, "repeat_interleave");
}

// ---- views and dim moves --------------------------------------------------------

std::vector<Tensor> unbind(const Tensor& t, int dim) {
  detail::require_arg(t, "unbind", "input");
  VNN_CHECK(IndexError, t.dim() > 0, "unbind: a 0-dim tensor has no dimension ", dim, " to unbind");
  int d = detail::wrap_dim(dim, t.dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < t.size(d); ++i) out.push_back(t.select(d, i));
  return out;
}

Tensor squeeze(const Tensor& t, const Dims& dims) {
  detail::require_arg(t, "squeeze", "input");
  std::vector<int> ds = detail::wrap_unique_dims(dims.vec(), t.dim(), "squeeze");
  std::sort(ds.rbegin(), ds.rend());  // the last first, so the earlier positions hold
  Tensor out = t.view(t.sizes());
  for (int d : ds) out = out.squeeze(d);
  return out;
}

Tensor movedim(const Tensor& t, const Dims& source, const Dims& destination) {
  detail::require_arg(t, "movedim", "input");
  VNN_CHECK(ValueError, source.vec().size() == destination.vec().size(), "movedim: source ", Shape(source.vec()).str(),
            " and destination ", Shape(destination.vec()).str(), " must have the same number of dims");
  int n = t.dim();
  std::vector<int> src = detail::wrap_unique_dims(source.vec(), n, "movedim");
  std::vector<int> dst = detail::wrap_unique_dims(destination.vec(), n, "movedim");
  if (n == 0) return t.view(t.sizes());
  std::vector<int64_t> perm(size_t(n), -1);
  std::vector<bool> used(size_t(n), false);
  for (size_t i = 0; i < src.size(); ++i) {
    perm[size_t(dst[i])] = src[i];
    used[size_t(src[i])] = true;
  }
  int next = 0;
  for (int64_t& p : perm) {
    if (p >= 0) continue;
    while (used[size_t(next)]) ++next;
    p = next++;
  }
  return t.permute(Shape(perm));
}

Tensor moveaxis(const Tensor& t, const Dims& source, const Dims& destination) {
  return movedim(t, source, destination);
}
Tensor swapaxes(const Tensor& t, int axis0, int axis1) { return t.transpose(axis0, axis1); }
Tensor swapdims(const Tensor& t, int dim0, int dim1) { return t.transpose(dim0, dim1); }

Tensor ravel(const Tensor& t) {
  detail::require_arg(t, "ravel", "input");
  return t.contiguous().view({-1});
}

Tensor narrow_copy(const Tensor& t, int dim, int64_t start, int64_t length) {
  detail::require_arg(t, "narrow_copy", "input");
  return t.narrow(dim, start, length).clone();
}

namespace {
// t, once checked to be defined; the *_copy forms below clone its view.
const Tensor& defined_input(const Tensor& t, const char* op) {
  detail::require_arg(t, op, "input");
  return t;
}
std::vector<Tensor> copies(std::vector<Tensor> views) {
  for (Tensor& v : views) v = v.clone();
  return views;
}
}  // namespace

Tensor alias_copy(const Tensor& t) { return defined_input(t, "alias_copy").clone(); }
Tensor detach_copy(const Tensor& t) { return defined_input(t, "detach_copy").detach().clone(); }
Tensor view_copy(const Tensor& t, const Shape& size) { return defined_input(t, "view_copy").view(size).clone(); }
Tensor permute_copy(const Tensor& t, const Shape& dims) { return defined_input(t, "permute_copy").permute(dims).clone(); }
Tensor expand_copy(const Tensor& t, const Shape& size) { return defined_input(t, "expand_copy").expand(size).clone(); }
Tensor as_strided_copy(const Tensor& t, const Shape& size, const Shape& stride, std::optional<int64_t> storage_offset) {
  const Tensor& x = defined_input(t, "as_strided_copy");
  return x.as_strided(size, stride, storage_offset.value_or(x.storage_offset())).clone();
}
Tensor diagonal_copy(const Tensor& t, int64_t offset, int dim1, int dim2) {
  return diagonal(defined_input(t, "diagonal_copy"), offset, dim1, dim2).clone();
}
Tensor select_copy(const Tensor& t, int dim, int64_t index) {
  return defined_input(t, "select_copy").select(dim, index).clone();
}
Tensor slice_copy(const Tensor& t, int dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  return defined_input(t, "slice_copy").slice(dim, start, end, step).clone();
}
Tensor t_copy(const Tensor& t) { return defined_input(t, "t_copy").t().clone(); }
Tensor unfold_copy(const Tensor& t, int dim, int64_t size, int64_t step) {
  return unfold(defined_input(t, "unfold_copy"), dim, size, step).clone();
}
Tensor transpose_copy(const Tensor& t, int dim0, int dim1) {
  return defined_input(t, "transpose_copy").transpose(dim0, dim1).clone();
}
Tensor squeeze_copy(const Tensor& t) { return defined_input(t, "squeeze_copy").squeeze().clone(); }
Tensor squeeze_copy(const Tensor& t, int dim) { return defined_input(t, "squeeze_copy").squeeze(dim).clone(); }
Tensor unsqueeze_copy(const Tensor& t, int dim) { return defined_input(t, "unsqueeze_copy").unsqueeze(dim).clone(); }
std::vector<Tensor> unbind_copy(const Tensor& t, int dim) { return copies(unbind(defined_input(t, "unbind_copy"), dim)); }
std::vector<Tensor> split_copy(const Tensor& t, int64_t split_size, int dim) {
  return copies(defined_input(t, "split_copy").split(split_size, dim));
}
std::vector<Tensor> split_with_sizes_copy(const Tensor& t, const std::vector<int64_t>& split_sizes, int dim) {
  return copies(defined_input(t, "split_with_sizes_copy").split(split_sizes, dim));
}

Tensor atleast_1d(const Tensor& t) {
  detail::require_arg(t, "atleast_1d", "input");
  return t.dim() == 0 ? t.reshape({1}) : t;
}
Tensor atleast_2d(const Tensor& t) {
  detail::require_arg(t, "atleast_2d", "input");
  if (t.dim() == 0) return t.reshape({1, 1});
  return t.dim() == 1 ? t.unsqueeze(0) : t;
}
Tensor atleast_3d(const Tensor& t) {
  detail::require_arg(t, "atleast_3d", "input");
  if (t.dim() == 0) return t.reshape({1, 1, 1});
  if (t.dim() == 1) return t.unsqueeze(0).unsqueeze(2);
  return t.dim() == 2 ? t.unsqueeze(2) : t;
}

namespace {
std::vector<Tensor> map_atleast(const std::vector<Tensor>& ts, Tensor (*f)(const Tensor&)) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(f(t));
  return out;
}
}  // namespace

std::vector<Tensor> atleast_1d(const std::vector<Tensor>& ts) { return map_atleast(ts, atleast_1d); }
std::vector<Tensor> atleast_2d(const std::vector<Tensor>& ts) { return map_atleast(ts, atleast_2d); }
std::vector<Tensor> atleast_3d(const std::vector<Tensor>& ts) { return map_atleast(ts, atleast_3d); }

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) out = broadcast_shapes(out, s, "broadcast_shapes");
  return out;
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::require_arg(tensors[i], "broadcast_tensors", "tensors");
    shapes.push_back(tensors[i].sizes());
  }
  Shape common = broadcast_shapes(shapes);
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.expand(common));
  return out;
}

// ---- joining and splitting -----------------------------------------------------------

namespace {
void require_list(const std::vector<Tensor>& ts, const char* op) {
  VNN_CHECK(ValueError, !ts.empty(), op, ": expected a non-empty list of tensors");
  for (const Tensor& t : ts) detail::require_arg(t, op, "tensors");
}
}  // namespace

Tensor hstack(const std::vector<Tensor>& tensors) {
  require_list(tensors, "hstack");
  std::vector<Tensor> ts = atleast_1d(tensors);
  return cat(ts, ts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  require_list(tensors, "vstack");
  return cat(atleast_2d(tensors), 0);
}
Tensor row_stack(const std::vector<Tensor>& tensors) { return vstack(tensors); }

Tensor dstack(const std::vector<Tensor>& tensors) {
  require_list(tensors, "dstack");
  return cat(atleast_3d(tensors), 2);
}

Tensor column_stack(const std::vector<Tensor>& tensors) {
  require_list(tensors, "column_stack");
  std::vector<Tensor> cols;
  for (const Tensor& t : tensors) cols.push_back(t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t);
  return cat(cols, 1);
}

std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int dim) {
  detail::require_arg(t, "tensor_split", "input");
  VNN_CHECK(ShapeError, t.dim() > 0, "tensor_split: expected at least a 1-dimensional tensor, got a 0-dim tensor");
  if (sections <= 0) VNN_THROW(ValueError, "tensor_split: number of sections must be larger than 0, got ", sections);
  int d = detail::wrap_dim(dim, t.dim(), "tensor_split");
  int64_t n = t.size(d), base = n / sections, longer = n % sections, at = 0;
  std::vector<Tensor> out;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = base + (i < longer ? 1 : 0);
    out.push_back(t.narrow(d, at, len));
    at += len;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& t, const std::vector<int64_t>& indices, int dim) {
  detail::require_arg(t, "tensor_split", "input");
  VNN_CHECK(ShapeError, t.dim() > 0, "tensor_split: expected at least a 1-dimensional tensor, got a 0-dim tensor");
  int d = detail::wrap_dim(dim, t.dim(), "tensor_split");
  std::vector<Tensor> out;
  std::optional<int64_t> start = 0;
  for (int64_t end : indices) {
    out.push_back(t.slice(d, start, end));
    start = end;
  }
  out.push_back(t.slice(d, start, std::nullopt));
  return out;
}

namespace {
// hsplit / vsplit / dsplit: the dim they split, after checking t's rank.
int split_dim(const Tensor& t, const char* op, int min_dims, int dim) {
  detail::require_arg(t, op, "input");
  VNN_CHECK(ShapeError, t.dim() >= min_dims, op, ": requires a tensor with at least ", min_dims,
            " dimension(s), but got a tensor of shape ", t.sizes());
  return dim;
}
std::vector<Tensor> equal_split(const Tensor& t, int64_t sections, int d, const char* op) {
  if (sections <= 0) VNN_THROW(ValueError, op, ": sections must be positive, got ", sections);
  VNN_CHECK(ValueError, t.size(d) % sections == 0, op, ": attempted to split along dimension ", d,
            ", but the size of the dimension ", t.size(d), " is not divisible by the split_size ", sections,
            "; pass split indices or use tensor_split");
  return tensor_split(t, sections, d);
}
}  // namespace

std::vector<Tensor> hsplit(const Tensor& t, int64_t sections) {
  int d = split_dim(t, "hsplit", 1, t.defined() && t.dim() == 1 ? 0 : 1);
  return equal_split(t, sections, d, "hsplit");
}
std::vector<Tensor> hsplit(const Tensor& t, const std::vector<int64_t>& indices) {
  return tensor_split(t, indices, split_dim(t, "hsplit", 1, t.defined() && t.dim() == 1 ? 0 : 1));
}
std::vector<Tensor> vsplit(const Tensor& t, int64_t sections) {
  return equal_split(t, sections, split_dim(t, "vsplit", 2, 0), "vsplit");
}
std::vector<Tensor> vsplit(const Tensor& t, const std::vector<int64_t>& indices) {
  return tensor_split(t, indices, split_dim(t, "vsplit", 2, 0));
}
std::vector<Tensor> dsplit(const Tensor& t, int64_t sections) {
  return equal_split(t, sections, split_dim(t, "dsplit", 3, 2), "dsplit");
}
std::vector<Tensor> dsplit(const Tensor& t, const std::vector<int64_t>& indices) {
  return tensor_split(t, indices, split_dim(t, "dsplit", 3, 2));
}

}  // namespace vnn
