// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of the reductions, softmax and the matrix products.
#include "opdb.hpp"

namespace vnn::opdb {
namespace {

// PyTorch's `dtype=` of a reduction casts the input first; vnn's reductions
// take no dtype argument.
void no_dtype(Call& c, const char* op) {
  if (c.kw("dtype")) gap(std::string(op) + "(dtype=)");
}

// dim: absent or None = every dim; an int or a list.
Dims dims_arg(Call& c, size_t i) {
  const Arg* d = c.get(i, "dim");
  return d ? Dims(d->ints()) : Dims();
}

OPDB("sum") {
  no_dtype(c, "sum");
  if (!c.has(0, "dim")) return vnn::sum(c.in());
  return vnn::sum(c.in(), dims_arg(c, 0), c.boolean(1, "keepdim", false));
};
OPDB("mean") {
  no_dtype(c, "mean");
  if (!c.has(0, "dim")) return vnn::mean(c.in());
  return vnn::mean(c.in(), dims_arg(c, 0), c.boolean(1, "keepdim", false));
};
OPDB("prod") {
  no_dtype(c, "prod");
  if (!c.has(0, "dim")) return vnn::prod(c.in());
  return vnn::prod(c.in(), int(c.integer(0, "dim")), c.boolean(1, "keepdim", false));
};
OPDB("amax") { return vnn::amax(c.in(), dims_arg(c, 0), c.boolean(1, "keepdim", false)); };
OPDB("amin") { return vnn::amin(c.in(), dims_arg(c, 0), c.boolean(1, "keepdim", false)); };
OPDB("max.reduction_no_dim") { return vnn::max(c.in()); };
OPDB("min.reduction_no_dim") { return vnn::min(c.in()); };
OPDB("max.reduction_with_dim") {
  return vnn::max(c.in(), int(c.integer(0, "dim")), c.boolean(1, "keepdim", false));
};
OPDB("min.reduction_with_dim") {
  return vnn::min(c.in(), int(c.integer(0, "dim")), c.boolean(1, "keepdim", false));
};
OPDB("max.binary") { return c.in().max(c.tensor(0, "other")); };
OPDB("min.binary") { return c.in().min(c.tensor(0, "other")); };
OPDB("argmax") {
  if (!c.has(0, "dim")) {
    if (c.boolean(1, "keepdim", false)) gap("argmax(dim=None, keepdim=True)");
    return vnn::argmax(c.in());
  }
  return vnn::argmax(c.in(), int(c.integer(0, "dim")), c.boolean(1, "keepdim", false));
};
OPDB("argmin") {
  if (!c.has(0, "dim")) {
    if (c.boolean(1, "keepdim", false)) gap("argmin(dim=None, keepdim=True)");
    return vnn::argmin(c.in());
  }
  return vnn::argmin(c.in(), int(c.integer(0, "dim")), c.boolean(1, "keepdim", false));
};

// var / std: (dim, unbiased, keepdim) or (dim, correction=, keepdim=).
int64_t correction_arg(Call& c) {
  if (const Arg* u = c.kw("unbiased")) return u->boolean() ? 1 : 0;
  const Arg* corr = c.kw("correction");
  if (corr && corr->kind == Arg::Kind::real && corr->f != double(int64_t(corr->f))) gap("fractional correction");
  return corr ? int64_t(corr->number()) : 1;
}
template <class F>
Arg var_like(Call& c, F f) {
  // torch.var(x, True) is var(x, unbiased=True): a bool first argument.
  const Arg* first = c.get(0, "dim");
  if (first && first->kind == Arg::Kind::boolean) return f(c.in(), Dims(), first->b ? 1 : 0, false);
  Dims dims = first ? Dims(first->ints()) : Dims();
  const Arg* second = c.get(1);
  int64_t corr = correction_arg(c);
  if (second && second->kind == Arg::Kind::boolean) corr = second->b ? 1 : 0;
  return f(c.in(), dims, corr, c.boolean(2, "keepdim", false));
}
OPDB("var") {
  return var_like(c, [](const Tensor& t, const Dims& d, int64_t k, bool keep) { return vnn::var(t, d, k, keep); });
};
OPDB("var.unbiased") {
  return var_like(c, [](const Tensor& t, const Dims& d, int64_t k, bool keep) { return vnn::var(t, d, k, keep); });
};
OPDB("std") {
  return var_like(c, [](const Tensor& t, const Dims& d, int64_t k, bool keep) { return vnn::std(t, d, k, keep); });
};
OPDB("std.unbiased") {
  return var_like(c, [](const Tensor& t, const Dims& d, int64_t k, bool keep) { return vnn::std(t, d, k, keep); });
};
OPDB("norm") {
  const Arg* p = c.get(0, "p");
  Dims dims = dims_arg(c, 1);
  const bool keep = c.boolean(2, "keepdim", false);
  if (p && p->kind == Arg::Kind::string) return vnn::norm(c.in(), p->s, dims, keep);
  return vnn::norm(c.in(), p ? p->number() : 2.0, dims, keep);
};
OPDB("norm.fro") {
  const Arg* p = c.get(0, "p");
  return vnn::norm(c.in(), p ? p->str() : std::string("fro"), dims_arg(c, 1), c.boolean(2, "keepdim", false));
};
OPDB("norm.inf") {
  const Arg* p = c.get(0, "p");
  return vnn::norm(c.in(), p ? p->number() : 2.0, dims_arg(c, 1), c.boolean(2, "keepdim", false));
};
OPDB("logsumexp") { return vnn::logsumexp(c.in(), dims_arg(c, 0), c.boolean(1, "keepdim", false)); };
OPDB("any") {
  if (!c.has(0, "dim")) return vnn::any(c.in());
  return vnn::any(c.in(), dims_arg(c, 0), c.boolean(1, "keepdim", false));
};
OPDB("all") {
  if (!c.has(0, "dim")) return vnn::all(c.in());
  return vnn::all(c.in(), dims_arg(c, 0), c.boolean(1, "keepdim", false));
};
OPDB("softmax") {
  no_dtype(c, "softmax");
  return vnn::softmax(c.in(), int(c.integer(0, "dim")));
};
OPDB("log_softmax") {
  no_dtype(c, "log_softmax");
  return vnn::log_softmax(c.in(), int(c.integer(0, "dim")));
};
OPDB("softmax.with_dtype") {
  const int64_t dim = c.integer(0, "dim");
  return nn::functional::softmax(c.in(), nn::functional::SoftmaxFuncOptions(dim).dtype(c.dtype(SIZE_MAX, "dtype")));
};
OPDB("log_softmax.with_dtype") {
  const int64_t dim = c.integer(0, "dim");
  return nn::functional::log_softmax(c.in(),
                                     nn::functional::LogSoftmaxFuncOptions(dim).dtype(c.dtype(SIZE_MAX, "dtype")));
};
OPDB("topk") {
  return vnn::topk(c.in(), c.integer(0, "k"), int(c.integer(1, "dim", -1)), c.boolean(2, "largest", true),
                   c.boolean(3, "sorted", true));
};

// Matrix products.
OPDB("matmul") { return vnn::matmul(c.in(), c.tensor(0, "other")); };
OPDB("mm") { return vnn::mm(c.in(), c.tensor(0, "mat2")); };
OPDB("bmm") { return vnn::bmm(c.in(), c.tensor(0, "mat2")); };
OPDB("bmm.triton_optimized") { return vnn::bmm(c.in(), c.tensor(0, "mat2")); };
OPDB("addmm") {
  return vnn::addmm(c.in(), c.tensor(0, "mat1"), c.tensor(1, "mat2"), c.number(2, "beta", 1.0),
                    c.number(3, "alpha", 1.0));
};
OPDB("addmm.decomposed") {
  return vnn::addmm(c.in(), c.tensor(0, "mat1"), c.tensor(1, "mat2"), c.number(2, "beta", 1.0),
                    c.number(3, "alpha", 1.0));
};

}  // namespace
}  // namespace vnn::opdb
