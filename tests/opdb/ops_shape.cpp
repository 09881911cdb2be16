// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of views, joins, indexing, creation and conversions.
#include "opdb.hpp"
#include "vnn/scatter_reduce.h"

namespace vnn::opdb {
namespace {

Shape shape_of(const std::vector<int64_t>& v) { return Shape(v); }

// A size given as a list ([2, 3]) or as varargs (zeros(2, 3)): the input.
Shape size_input(Call& c) {
  const Arg& in = c.input();
  if (in.kind == Arg::Kind::integer) return Shape{in.i};
  return shape_of(in.ints());
}

// ---- views ---------------------------------------------------------------
OPDB("reshape") { return c.in().reshape(shape_of(c.ints(0, "shape", {}))); };
OPDB("view") { return c.in().view(shape_of(c.ints(0, "size", {}))); };
OPDB("view_copy") { return c.in().view(shape_of(c.ints(0, "size", {}))).clone(); };
OPDB("reshape_as") { return c.in().reshape_as(c.tensor(0, "other")); };
OPDB("view_as") { return c.in().view_as(c.tensor(0, "other")); };
OPDB("expand") { return c.in().expand(shape_of(c.ints(0, "size", {}))); };
OPDB("expand_copy") { return c.in().expand(shape_of(c.ints(0, "size", {}))).clone(); };
OPDB("expand_as") { return c.in().expand_as(c.tensor(0, "other")); };
OPDB("broadcast_to") { return vnn::broadcast_to(c.in(), shape_of(c.ints(0, "size", {}))); };
OPDB("permute") { return c.in().permute(shape_of(c.ints(0, "dims", {}))); };
OPDB("permute_copy") { return c.in().permute(shape_of(c.ints(0, "dims", {}))).clone(); };
OPDB("transpose") { return c.in().transpose(int(c.integer(0, "dim0")), int(c.integer(1, "dim1"))); };
OPDB("transpose_copy") {
  return c.in().transpose(int(c.integer(0, "dim0")), int(c.integer(1, "dim1"))).clone();
};
OPDB("t") { return c.in().t(); };
OPDB("t_copy") { return c.in().t().clone(); };
OPDB("mT") { return c.in().mT(); };
OPDB("squeeze") {
  if (!c.has(0, "dim")) return vnn::squeeze(c.in());
  return vnn::squeeze(c.in(), int(c.integer(0, "dim")));
};
OPDB("squeeze_copy") {
  if (!c.has(0, "dim")) return vnn::squeeze(c.in()).clone();
  return vnn::squeeze(c.in(), int(c.integer(0, "dim"))).clone();
};
OPDB("unsqueeze") { return vnn::unsqueeze(c.in(), int(c.integer(0, "dim"))); };
OPDB("unsqueeze_copy") { return vnn::unsqueeze(c.in(), int(c.integer(0, "dim"))).clone(); };
OPDB("flatten") {
  return c.in().flatten(int(c.integer(0, "start_dim", 0)), int(c.integer(1, "end_dim", -1)));
};
OPDB("unflatten") { return c.in().unflatten(int(c.integer(0, "dim")), shape_of(c.ints(1, "sizes", {}))); };
OPDB("narrow") {
  const Arg* start = c.get(1, "start");
  if (start && start->kind == Arg::Kind::tensor) gap("narrow with a tensor start");
  return c.in().narrow(int(c.integer(0, "dim")), start->integer(), c.integer(2, "length"));
};
OPDB("select") { return c.in().select(int(c.integer(0, "dim")), c.integer(1, "index")); };
OPDB("slice") {
  const int dim = int(c.integer(0, "dim", 0));
  std::optional<int64_t> start, end;
  if (const Arg* a = c.get(1, "start")) start = a->integer();
  if (const Arg* a = c.get(2, "end")) end = a->integer();
  return c.in().slice(dim, start, end, c.integer(3, "step", 1));
};
OPDB("split") {
  const Arg* s = c.get(0, "split_size_or_sections");
  const int dim = int(c.integer(1, "dim", 0));
  if (s->kind == Arg::Kind::list) return vnn::split(c.in(), s->ints(), dim);
  return vnn::split(c.in(), s->integer(), dim);
};
OPDB("split.list_args") {
  return vnn::split(c.in(), c.ints(0, "split_size_or_sections", {}), int(c.integer(1, "dim", 0)));
};
OPDB("split_with_sizes") { return vnn::split(c.in(), c.ints(0, "split_sizes", {}), int(c.integer(1, "dim", 0))); };
OPDB("split_with_sizes_copy") {
  auto parts = vnn::split(c.in(), c.ints(0, "split_sizes", {}), int(c.integer(1, "dim", 0)));
  for (auto& p : parts) p = p.clone();
  return parts;
};
OPDB("chunk") { return vnn::chunk(c.in(), c.integer(0, "chunks"), int(c.integer(1, "dim", 0))); };
OPDB("cat") { return vnn::cat(c.input().tensors(), int(c.integer(0, "dim", 0))); };
OPDB("stack") { return vnn::stack(c.input().tensors(), int(c.integer(0, "dim", 0))); };
OPDB("clone") {
  if (const Arg* m = c.kw("memory_format"); m && m->s != "preserve_format" && m->s != "contiguous_format")
    gap("memory_format " + m->s);
  return c.in().clone();
};
OPDB("contiguous") {
  if (const Arg* m = c.kw("memory_format"); m && m->s != "contiguous_format") gap("memory_format " + m->s);
  return c.in().contiguous();
};
OPDB("as_strided") {
  return c.in().as_strided(shape_of(c.ints(0, "size", {})), shape_of(c.ints(1, "stride", {})),
                           c.integer(2, "storage_offset", 0));
};
OPDB("as_strided_copy") {
  return c.in()
      .as_strided(shape_of(c.ints(0, "size", {})), shape_of(c.ints(1, "stride", {})), c.integer(2, "storage_offset", 0))
      .clone();
};
OPDB("tril") { return vnn::tril(c.in(), c.integer(0, "diagonal", 0)); };
OPDB("triu") { return vnn::triu(c.in(), c.integer(0, "diagonal", 0)); };

// ---- indexing ------------------------------------------------------------
OPDB("index_select") { return vnn::index_select(c.in(), int(c.integer(0, "dim")), c.tensor(1, "index")); };
OPDB("gather") {
  if (c.boolean(3, "sparse_grad", false)) gap("gather(sparse_grad=True)");
  return vnn::gather(c.in(), int(c.integer(0, "dim")), c.tensor(1, "index"));
};
OPDB("scatter") {
  const int dim = int(c.integer(0, "dim"));
  const Tensor& index = c.tensor(1, "index");
  const Arg* src = c.get(2, "src");
  if (!src) src = c.kw("value");
  const Arg* reduce = c.kw("reduce");
  if (src->kind != Arg::Kind::tensor) {
    const double value = c.number(2, "value");
    return reduce ? vnn::scatter(c.in(), dim, index, value, c.str(SIZE_MAX, "reduce", ""))
                  : vnn::scatter(c.in(), dim, index, value);
  }
  return reduce ? vnn::scatter(c.in(), dim, index, src->t, c.str(SIZE_MAX, "reduce", ""))
                : vnn::scatter(c.in(), dim, index, src->t);
};
OPDB("scatter_add") {
  return vnn::scatter_add(c.in(), int(c.integer(0, "dim")), c.tensor(1, "index"), c.tensor(2, "src"));
};
OPDB("index_add") {
  return vnn::index_add(c.in(), int(c.integer(0, "dim")), c.tensor(1, "index"), c.tensor(2, "source"),
                        c.number(3, "alpha", 1.0));
};
// scatter_reduce / index_reduce: one entry per reduce (the variant), which
// the sample passes as its string argument.
Arg scatter_reduce_call(Call& c) {
  return vnn::scatter_reduce(c.in(), c.integer(0, "dim"), c.tensor(1, "index"), c.tensor(2, "src"),
                             c.str(3, "reduce", "sum"), c.boolean(4, "include_self", true));
}
Arg index_reduce_call(Call& c) {
  return vnn::index_reduce(c.in(), c.integer(0, "dim"), c.tensor(1, "index"), c.tensor(2, "source"),
                           c.str(3, "reduce", "prod"), c.boolean(4, "include_self", true));
}
OPDB("scatter_reduce.sum") { return scatter_reduce_call(c); };
OPDB("scatter_reduce.prod") { return scatter_reduce_call(c); };
OPDB("scatter_reduce.mean") { return scatter_reduce_call(c); };
OPDB("scatter_reduce.amax") { return scatter_reduce_call(c); };
OPDB("scatter_reduce.amin") { return scatter_reduce_call(c); };
OPDB("index_reduce.prod") { return index_reduce_call(c); };
OPDB("index_reduce.mean") { return index_reduce_call(c); };
OPDB("index_reduce.amax") { return index_reduce_call(c); };
OPDB("index_reduce.amin") { return index_reduce_call(c); };
OPDB("nn.functional.one_hot") { return vnn::one_hot(c.in(), c.integer(0, "num_classes", -1)); };

// ---- creation --------------------------------------------------------------
OPDB("zeros") { return vnn::zeros(size_input(c), c.options()); };
OPDB("ones") { return vnn::ones(size_input(c), c.options()); };
OPDB("empty") { return vnn::empty(size_input(c), c.options()); };
OPDB("full") { return vnn::full(size_input(c), c.number(0, "fill_value"), c.options()); };
OPDB("zeros_like") { return vnn::zeros_like(c.in(), c.options(c.in().dtype())); };
OPDB("ones_like") { return vnn::ones_like(c.in(), c.options(c.in().dtype())); };
OPDB("empty_like") { return vnn::empty_like(c.in(), c.options(c.in().dtype())); };
OPDB("full_like") { return vnn::full_like(c.in(), c.number(0, "fill_value"), c.options(c.in().dtype())); };
// new_*: self's dtype and device unless dtype= / device= say otherwise.
bool new_options_given(Call& c) {
  const bool given = c.kw("dtype") || c.kw("device");
  return given;
}
OPDB("new_zeros") {
  if (!new_options_given(c)) return c.in().new_zeros(shape_of(c.ints(0, "size", {})));
  return vnn::zeros(shape_of(c.ints(0, "size", {})), c.options(c.in().dtype()));
};
OPDB("new_ones") {
  if (!new_options_given(c)) return c.in().new_ones(shape_of(c.ints(0, "size", {})));
  return vnn::ones(shape_of(c.ints(0, "size", {})), c.options(c.in().dtype()));
};
OPDB("new_empty") {
  if (!new_options_given(c)) return c.in().new_empty(shape_of(c.ints(0, "size", {})));
  return vnn::empty(shape_of(c.ints(0, "size", {})), c.options(c.in().dtype()));
};
OPDB("new_full") {
  if (!new_options_given(c)) return c.in().new_full(shape_of(c.ints(0, "size", {})), c.number(1, "fill_value"));
  return vnn::full(shape_of(c.ints(0, "size", {})), c.number(1, "fill_value"), c.options(c.in().dtype()));
};
OPDB("scalar_tensor") { return vnn::scalar_tensor(c.input().number(), c.options()); };
OPDB("eye") {
  const int64_t n = c.input().integer();
  return vnn::eye(n, c.integer(0, "m", n), c.options());
};
OPDB("linspace") {
  if (c.input().kind == Arg::Kind::tensor) gap("linspace with tensor bounds");
  return vnn::linspace(c.input().number(), c.number(0, "end"), c.integer(1, "steps"), c.options());
};
OPDB("arange") {
  // arange(end), arange(start, end), arange(start, end, step).
  const Arg* end = c.get(0, "end");
  const Arg* step = c.get(1, "step");
  const bool ints = c.input().kind == Arg::Kind::integer && (!end || end->kind == Arg::Kind::integer) &&
                    (!step || step->kind == Arg::Kind::integer);
  TensorOptions o = c.options(ints ? kInt64 : kFloat32);
  if (!end) return vnn::arange(0.0, c.input().number(), 1.0, o);
  return vnn::arange(c.input().number(), end->number(), step ? step->number() : 1.0, o);
};

// The functional fill / zero_ of op_db: vnn's fill_ / zero_ on a copy.
OPDB("fill") {
  Tensor t = c.in().clone();
  return t.fill_(c.number(0, "value"));
};
OPDB("zero_") {
  Tensor t = c.in().clone();
  return t.zero_();
};

// ---- conversions -----------------------------------------------------------
// vnn's tensors are contiguous: a channels_last memory_format is a gap.
void row_major_format_only(Call& c) {
  if (const Arg* m = c.kw("memory_format"); m && m->s != "preserve_format" && m->s != "contiguous_format")
    gap("memory_format " + m->s);
}
#define VNN_OPDB_CONVERSION(KEY, DT)                                                          \
  OPDB(KEY) {                                                                                 \
    row_major_format_only(c);                                                                 \
    return c.in().to(DT);                                                                     \
  };
VNN_OPDB_CONVERSION("float", kFloat32)
VNN_OPDB_CONVERSION("double", kFloat64)
VNN_OPDB_CONVERSION("long", kInt64)
VNN_OPDB_CONVERSION("int", kInt32)
VNN_OPDB_CONVERSION("bool", kBool)
VNN_OPDB_CONVERSION("byte", kUInt8)
VNN_OPDB_CONVERSION("half", kFloat16)
VNN_OPDB_CONVERSION("bfloat16", kBFloat16)
VNN_OPDB_CONVERSION("char", kInt8)
VNN_OPDB_CONVERSION("short", kInt16)
// Tensor.to(device, dtype, non_blocking, copy): PyTorch's "cpu" stands for the device under test.
OPDB("to") {
  c.get(0, "device");
  const DType dt = c.dtype(1, "dtype").value_or(c.in().dtype());
  const bool non_blocking = c.boolean(2, "non_blocking", false);
  const bool copy = c.boolean(3, "copy", false);
  row_major_format_only(c);
  Tensor r = c.in().to(c.device, dt, non_blocking);
  return copy && dt == c.in().dtype() ? r.clone() : r;
};
// Tensor.T: the dims reversed.
OPDB("T") {
  std::vector<int64_t> dims;
  for (int64_t d = c.in().dim() - 1; d >= 0; --d) dims.push_back(d);
  return c.in().permute(Shape(dims));
};
// constant_pad_nd: F::pad's constant mode (negative pads crop).
OPDB("constant_pad_nd") {
  nn::functional::PadFuncOptions o(c.ints(0, "pad", {}));
  return nn::functional::pad(c.in(), o.value(c.number(1, "value", 0.0)));
};

}  // namespace
}  // namespace vnn::opdb
