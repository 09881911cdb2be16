// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of the shape, joining and product ops (vnn/shape_ops.h,
// vnn/products.h) and the scans and compactions (vnn/scan.h).
#include "opdb.hpp"

namespace vnn::opdb {
namespace {

// A tensor list given as the input or as varargs (meshgrid(a, b)).
std::vector<Tensor> tensor_list(Call& c) {
  if (c.input().kind == Arg::Kind::list) return c.input().tensors();
  std::vector<Tensor> out{c.in()};
  for (size_t i = 0; i < c.nargs(); ++i) out.push_back(c.tensor(i));
  return out;
}

// ---- shape -----------------------------------------------------------------
OPDB("flip") { return vnn::flip(c.in(), Dims(c.ints(0, "dims", {}))); };
OPDB("fliplr") { return vnn::fliplr(c.in()); };
OPDB("flipud") { return vnn::flipud(c.in()); };
OPDB("roll") { return vnn::roll(c.in(), Dims(c.ints(0, "shifts", {})), Dims(c.ints(1, "dims", {}))); };
OPDB("rot90") { return vnn::rot90(c.in(), c.integer(0, "k", 1), Dims(c.ints(1, "dims", {0, 1}))); };
OPDB("repeat") { return vnn::repeat(c.in(), Dims(c.ints(0, "repeats", {}))); };
OPDB("tile") { return vnn::tile(c.in(), Dims(c.ints(0, "dims", {}))); };
OPDB("repeat_interleave") {
  std::optional<int64_t> dim, output_size;
  if (const Arg* d = c.get(1, "dim")) dim = d->integer();
  if (const Arg* o = c.kw("output_size")) output_size = o->integer();
  const Arg* r = c.get(0, "repeats");
  if (!r) return vnn::repeat_interleave(c.in());
  if (r->kind == Arg::Kind::tensor) return vnn::repeat_interleave(c.in(), r->t, dim, output_size);
  return vnn::repeat_interleave(c.in(), r->integer(), dim, output_size);
};
OPDB("unbind") { return vnn::unbind(c.in(), int(c.integer(0, "dim", 0))); };
OPDB("unbind_copy") {
  auto parts = vnn::unbind(c.in(), int(c.integer(0, "dim", 0)));
  for (auto& p : parts) p = p.clone();
  return parts;
};
OPDB("movedim") {
  return vnn::movedim(c.in(), Dims(c.ints(0, "source", {})), Dims(c.ints(1, "destination", {})));
};
OPDB("ravel") { return vnn::ravel(c.in()); };
OPDB("narrow_copy") {
  return vnn::narrow_copy(c.in(), int(c.integer(0, "dim")), c.integer(1, "start"), c.integer(2, "length"));
};
OPDB("atleast_1d") {
  if (c.input().kind == Arg::Kind::list) return vnn::atleast_1d(c.input().tensors());
  return vnn::atleast_1d(c.in());
};
OPDB("atleast_2d") {
  if (c.input().kind == Arg::Kind::list) return vnn::atleast_2d(c.input().tensors());
  return vnn::atleast_2d(c.in());
};
OPDB("atleast_3d") {
  if (c.input().kind == Arg::Kind::list) return vnn::atleast_3d(c.input().tensors());
  return vnn::atleast_3d(c.in());
};
OPDB("broadcast_tensors") { return vnn::broadcast_tensors(tensor_list(c)); };
OPDB("broadcast_shapes") {
  std::vector<Shape> shapes;
  auto add = [&](const Arg& a) { shapes.push_back(a.kind == Arg::Kind::integer ? Shape{a.i} : Shape(a.ints())); };
  add(c.input());
  for (size_t i = 0; i < c.nargs(); ++i) add(*c.get(i));
  Shape s = vnn::broadcast_shapes(shapes);
  std::vector<int64_t> v(s.begin(), s.end());
  Arg out;
  out.kind = Arg::Kind::list;
  for (int64_t x : v) out.items.emplace_back(x);
  return out;
};
OPDB("diag") { return vnn::diag(c.in(), c.integer(0, "diagonal", 0)); };
OPDB("diagonal") {
  return vnn::diagonal(c.in(), c.integer(0, "offset", 0), int(c.integer(1, "dim1", 0)), int(c.integer(2, "dim2", 1)));
};
OPDB("diagonal_copy") {
  return vnn::diagonal(c.in(), c.integer(0, "offset", 0), int(c.integer(1, "dim1", 0)), int(c.integer(2, "dim2", 1)))
      .clone();
};
OPDB("diag_embed") {
  return vnn::diag_embed(c.in(), c.integer(0, "offset", 0), int(c.integer(1, "dim1", -2)),
                         int(c.integer(2, "dim2", -1)));
};
OPDB("diagflat") { return vnn::diagflat(c.in(), c.integer(0, "offset", 0)); };
OPDB("trace") { return vnn::trace(c.in()); };
OPDB("tril_indices") {
  const int64_t row = c.input().integer();
  return vnn::tril_indices(row, c.integer(0, "col"), c.integer(1, "offset", 0), c.options(kInt64));
};
OPDB("triu_indices") {
  const int64_t row = c.input().integer();
  return vnn::triu_indices(row, c.integer(0, "col"), c.integer(1, "offset", 0), c.options(kInt64));
};
OPDB("block_diag") { return vnn::block_diag(tensor_list(c)); };
OPDB("cartesian_prod") { return vnn::cartesian_prod(tensor_list(c)); };
OPDB("combinations") {
  return vnn::combinations(c.in(), c.integer(0, "r", 2), c.boolean(1, "with_replacement", false));
};
OPDB("meshgrid.list_of_tensors") { return vnn::meshgrid(c.input().tensors(), c.str(SIZE_MAX, "indexing", "ij")); };
OPDB("meshgrid.variadic_tensors") {
  const std::string indexing = c.str(SIZE_MAX, "indexing", "ij");
  return vnn::meshgrid(tensor_list(c), indexing);
};
OPDB("hstack") { return vnn::hstack(c.input().tensors()); };
OPDB("vstack") { return vnn::vstack(c.input().tensors()); };
OPDB("dstack") { return vnn::dstack(c.input().tensors()); };
OPDB("column_stack") { return vnn::column_stack(c.input().tensors()); };

// tensor_split / hsplit / vsplit / dsplit: sections (int or 0-D tensor) or indices (list or 1-D tensor).
template <class BySections, class ByIndices>
Arg split_call(const Arg* how, BySections by_sections, ByIndices by_indices) {
  if (how->kind == Arg::Kind::tensor) {
    std::vector<int64_t> v = how->t.to(kInt64).cpu().contiguous().to_vector<int64_t>();
    if (how->t.dim() == 0) return by_sections(v.at(0));
    return by_indices(v);
  }
  if (how->kind == Arg::Kind::list) return by_indices(how->ints());
  return by_sections(how->integer());
}
OPDB("tensor_split") {
  const Arg* how = c.get(0, "indices_or_sections");
  if (!how) how = c.kw("sections");
  if (!how) how = c.kw("indices");
  const int dim = int(c.integer(1, "dim", 0));
  const Tensor& t = c.in();
  return split_call(
      how, [&](int64_t s) { return Arg(vnn::tensor_split(t, s, dim)); },
      [&](const std::vector<int64_t>& v) { return Arg(vnn::tensor_split(t, v, dim)); });
};
#define VNN_OPDB_SPLIT(KEY, FN)                                                            \
  OPDB(KEY) {                                                                              \
    const Tensor& t = c.in();                                                              \
    return split_call(                                                                     \
        c.get(0, "indices_or_sections"), [&](int64_t s) { return Arg(vnn::FN(t, s)); },    \
        [&](const std::vector<int64_t>& v) { return Arg(vnn::FN(t, v)); });                \
  };
VNN_OPDB_SPLIT("hsplit", hsplit)
VNN_OPDB_SPLIT("vsplit", vsplit)
VNN_OPDB_SPLIT("dsplit", dsplit)

// ---- indexing forms ----------------------------------------------------------
OPDB("take") { return vnn::take(c.in(), c.tensor(0, "index")); };
OPDB("squeeze.multiple") { return vnn::squeeze(c.in(), Dims(c.ints(0, "dim", {}))); };
OPDB("unfold") {
  return vnn::unfold(c.in(), int(c.integer(0, "dimension")), c.integer(1, "size"), c.integer(2, "step"));
};
OPDB("unfold_copy") {
  return vnn::unfold_copy(c.in(), int(c.integer(0, "dimension")), c.integer(1, "size"), c.integer(2, "step"));
};
OPDB("put") {
  return vnn::put(c.in(), c.tensor(0, "index"), c.tensor(1, "source"), c.boolean(2, "accumulate", false));
};
OPDB("unravel_index") { return vnn::unravel_index(c.in(), Shape(c.ints(0, "shape", {}))); };
OPDB("take_along_dim") {
  std::optional<int64_t> dim;
  if (const Arg* d = c.get(1, "dim")) dim = d->integer();
  return vnn::take_along_dim(c.in(), c.tensor(0, "indices"), dim);
};
OPDB("index_copy") {
  return vnn::index_copy(c.in(), int(c.integer(0, "dim")), c.tensor(1, "index"), c.tensor(2, "source"));
};
OPDB("index_fill") {
  const int dim = int(c.integer(0, "dim"));
  const Tensor& index = c.tensor(1, "index");
  const Arg* v = c.get(2, "value");
  if (v->kind == Arg::Kind::tensor) return vnn::index_fill(c.in(), dim, index, v->t);
  return vnn::index_fill(c.in(), dim, index, v->number());
};
OPDB("select_scatter") {
  return vnn::select_scatter(c.in(), c.tensor(0, "src"), int(c.integer(1, "dim")), c.integer(2, "index"));
};
OPDB("slice_scatter") {
  std::optional<int64_t> start, end;
  const Tensor& src = c.tensor(0, "src");
  const int dim = int(c.integer(1, "dim", 0));
  if (const Arg* a = c.get(2, "start")) start = a->integer();
  if (const Arg* a = c.get(3, "end")) end = a->integer();
  return vnn::slice_scatter(c.in(), src, dim, start, end, c.integer(4, "step", 1));
};
OPDB("diagonal_scatter") {
  return vnn::diagonal_scatter(c.in(), c.tensor(0, "src"), c.integer(1, "offset", 0), int(c.integer(2, "dim1", 0)),
                               int(c.integer(3, "dim2", 1)));
};

// ---- products --------------------------------------------------------------
OPDB("outer") { return vnn::outer(c.in(), c.tensor(0, "vec2")); };
OPDB("inner") { return vnn::inner(c.in(), c.tensor(0, "other")); };
OPDB("kron") { return vnn::kron(c.in(), c.tensor(0, "other")); };
OPDB("tensordot") {
  const Arg* d = c.get(1, "dims");
  const Tensor& b = c.tensor(0, "other");
  if (!d) return vnn::tensordot(c.in(), b);
  if (d->kind == Arg::Kind::list) return vnn::tensordot(c.in(), b, d->items.at(0).ints(), d->items.at(1).ints());
  return vnn::tensordot(c.in(), b, d->integer());
};
OPDB("einsum") {
  // op_db's sample: the operands as the input list, the equation as args[0].
  return vnn::einsum(c.get(0, "equation")->str(), c.input().tensors());
};
OPDB("cross") {
  std::optional<int64_t> dim;
  const Tensor& b = c.tensor(0, "other");
  if (const Arg* d = c.get(1, "dim")) dim = d->integer();
  return vnn::cross(c.in(), b, dim);
};
OPDB("cdist") {
  const Tensor& b = c.tensor(0, "x2");
  const double p = c.number(1, "p", 2.0);
  std::optional<int64_t> mode;
  if (const Arg* m = c.get(2, "compute_mode")) {
    const std::string& s = m->str();
    mode = s == "use_mm_for_euclid_dist" ? 1 : s == "donot_use_mm_for_euclid_dist" ? 2 : 0;
  }
  return vnn::cdist(c.in(), b, p, mode);
};
OPDB("cov") {
  const int64_t corr = c.integer(SIZE_MAX, "correction", 1);
  const Arg* fw = c.kw("fweights");
  const Arg* aw = c.kw("aweights");
  return vnn::cov(c.in(), corr, fw ? fw->tensor() : Tensor(), aw ? aw->tensor() : Tensor());
};
OPDB("corrcoef") { return vnn::corrcoef(c.in()); };

// ---- scans and compactions (vnn/scan.h) ---------------------------------------
OPDB("cumsum") { return vnn::cumsum(c.in(), c.integer(0, "dim"), c.dtype(1, "dtype")); };
OPDB("cumprod") { return vnn::cumprod(c.in(), c.integer(0, "dim"), c.dtype(1, "dtype")); };
OPDB("cummax") { return vnn::cummax(c.in(), c.integer(0, "dim")); };
OPDB("cummin") { return vnn::cummin(c.in(), c.integer(0, "dim")); };
OPDB("logcumsumexp") { return vnn::logcumsumexp(c.in(), c.integer(0, "dim")); };
OPDB("nonzero") {
  if (c.boolean(SIZE_MAX, "as_tuple", false)) return vnn::nonzero_numpy(c.in());
  return vnn::nonzero(c.in());
};
OPDB("argwhere") { return vnn::argwhere(c.in()); };
OPDB("count_nonzero") {
  const Arg* d = c.get(0, "dim");
  return vnn::count_nonzero(c.in(), d ? Dims(d->ints()) : Dims());
};
OPDB("masked_select") { return vnn::masked_select(c.in(), c.tensor(0, "mask")); };
OPDB("masked_scatter") { return vnn::masked_scatter(c.in(), c.tensor(0, "mask"), c.tensor(1, "source")); };
OPDB("nansum") {
  if (c.kw("dtype")) gap("nansum(dtype=)");
  const Arg* d = c.get(0, "dim");
  return vnn::nansum(c.in(), d ? Dims(d->ints()) : Dims(), c.boolean(1, "keepdim", false));
};
OPDB("nanmean") {
  if (c.kw("dtype")) gap("nanmean(dtype=)");
  const Arg* d = c.get(0, "dim");
  return vnn::nanmean(c.in(), d ? Dims(d->ints()) : Dims(), c.boolean(1, "keepdim", false));
};
OPDB("aminmax") {
  std::optional<int64_t> dim;
  if (const Arg* d = c.kw("dim")) dim = d->integer();
  return vnn::aminmax(c.in(), dim, c.boolean(SIZE_MAX, "keepdim", false));
};

// var_mean / std_mean share var's argument forms: (dim, unbiased, keepdim) or correction=.
template <class F>
Arg var_mean_like(Call& c, F f) {
  const Arg* first = c.get(0, "dim");
  if (first && first->kind == Arg::Kind::boolean) return f(c.in(), Dims(), first->b ? 1 : 0, false);
  Dims dims = first ? Dims(first->ints()) : Dims();
  int64_t corr = 1;
  if (const Arg* u = c.kw("unbiased")) corr = u->boolean() ? 1 : 0;
  if (const Arg* k = c.kw("correction")) {
    if (k->kind == Arg::Kind::real && k->f != double(int64_t(k->f))) gap("fractional correction");
    corr = int64_t(k->number());
  }
  if (const Arg* second = c.get(1); second && second->kind == Arg::Kind::boolean) corr = second->b ? 1 : 0;
  return f(c.in(), dims, corr, c.boolean(2, "keepdim", false));
}
#define VNN_OPDB_VAR_MEAN(KEY, FN)                                                                      \
  OPDB(KEY) {                                                                                           \
    return var_mean_like(c, [](const Tensor& t, const Dims& d, int64_t k, bool keep) { return Arg(vnn::FN(t, d, k, keep)); }); \
  };
VNN_OPDB_VAR_MEAN("var_mean", var_mean)
VNN_OPDB_VAR_MEAN("var_mean.unbiased", var_mean)
VNN_OPDB_VAR_MEAN("std_mean", std_mean)
VNN_OPDB_VAR_MEAN("std_mean.unbiased", std_mean)

}  // namespace
}  // namespace vnn::opdb
