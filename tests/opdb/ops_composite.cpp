// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of the composite ops (vnn/composite.h).
#include "opdb.hpp"
#include "vnn/composite.h"

namespace vnn::opdb {
namespace {

OPDB("addcmul") {
  return vnn::addcmul(c.in(), c.tensor(0, "tensor1"), c.tensor(1, "tensor2"), c.number(SIZE_MAX, "value", 1.0));
};
OPDB("addcdiv") {
  return vnn::addcdiv(c.in(), c.tensor(0, "tensor1"), c.tensor(1, "tensor2"), c.number(SIZE_MAX, "value", 1.0));
};
OPDB("lerp") {
  const Tensor& end = c.tensor(0, "end");
  const Arg* w = c.get(1, "weight");
  if (w->kind == Arg::Kind::tensor) return vnn::lerp(c.in(), end, w->t);
  return vnn::lerp(c.in(), end, w->number());
};
OPDB("rsub") {
  const Arg* other = c.get(0, "other");
  const double alpha = c.number(1, "alpha", 1.0);
  if (other->kind == Arg::Kind::tensor) return vnn::rsub(c.in(), other->t, alpha);
  return vnn::rsub(c.in(), other->number(), alpha);
};
OPDB("float_power") {
  const Arg* e = c.get(0, "exponent");
  if (e->kind == Arg::Kind::tensor) return vnn::float_power(c.in(), e->t);
  return vnn::float_power(c.in(), e->number());
};
OPDB("nan_to_num") {
  const double nan = c.number(0, "nan", 0.0);
  std::optional<double> posinf, neginf;
  if (const Arg* p = c.get(1, "posinf")) posinf = p->number();
  if (const Arg* n = c.get(2, "neginf")) neginf = n->number();
  return vnn::nan_to_num(c.in(), nan, posinf, neginf);
};
OPDB("isposinf") { return vnn::isposinf(c.in()); };
OPDB("isneginf") { return vnn::isneginf(c.in()); };
OPDB("logit") {
  std::optional<double> eps;
  if (const Arg* e = c.get(0, "eps")) eps = e->number();
  return vnn::logit(c.in(), eps);
};
OPDB("isin") {
  const Arg* test = c.get(0, "test_elements");
  const bool unique = c.boolean(SIZE_MAX, "assume_unique", false);
  const bool invert = c.boolean(SIZE_MAX, "invert", false);
  if (c.input().kind != Arg::Kind::tensor) gap("isin with a scalar element");
  if (test->kind == Arg::Kind::tensor) return vnn::isin(c.in(), test->t, unique, invert);
  return vnn::isin(c.in(), test->number(), unique, invert);
};
OPDB("dot") { return vnn::dot(c.in(), c.tensor(0, "tensor")); };
OPDB("vdot") { return vnn::vdot(c.in(), c.tensor(0, "other")); };
OPDB("mv") { return vnn::mv(c.in(), c.tensor(0, "vec")); };
OPDB("addmv") {
  return vnn::addmv(c.in(), c.tensor(0, "mat"), c.tensor(1, "vec"), c.number(SIZE_MAX, "beta", 1.0),
                    c.number(SIZE_MAX, "alpha", 1.0));
};
OPDB("addr") {
  return vnn::addr(c.in(), c.tensor(0, "vec1"), c.tensor(1, "vec2"), c.number(SIZE_MAX, "beta", 1.0),
                   c.number(SIZE_MAX, "alpha", 1.0));
};
OPDB("baddbmm") {
  return vnn::baddbmm(c.in(), c.tensor(0, "batch1"), c.tensor(1, "batch2"), c.number(SIZE_MAX, "beta", 1.0),
                      c.number(SIZE_MAX, "alpha", 1.0));
};
OPDB("addbmm") {
  return vnn::addbmm(c.in(), c.tensor(0, "batch1"), c.tensor(1, "batch2"), c.number(SIZE_MAX, "beta", 1.0),
                     c.number(SIZE_MAX, "alpha", 1.0));
};
OPDB("dist") {
  const Tensor& b = c.tensor(0, "other");
  return vnn::dist(c.in(), b, c.number(1, "p", 2.0));
};
OPDB("diff") {
  const int64_t n = c.integer(0, "n", 1);
  const int64_t dim = c.integer(1, "dim", -1);
  const Arg* pre = c.get(2, "prepend");
  const Arg* app = c.get(3, "append");
  return vnn::diff(c.in(), n, dim, pre ? pre->tensor() : Tensor(), app ? app->tensor() : Tensor());
};
template <class ByDx, class ByX>
Arg trapezoid_call(Call& c, ByDx by_dx, ByX by_x) {
  const Arg* x = c.get(0, "x");
  const int64_t dim = c.integer(SIZE_MAX, "dim", -1);
  if (x && x->kind == Arg::Kind::tensor) return by_x(x->t, dim);
  const Arg* dx = c.kw("dx");
  return by_dx(x ? x->number() : dx ? dx->number() : 1.0, dim);
}
OPDB("trapezoid") {
  const Tensor& y = c.in();
  return trapezoid_call(
      c, [&](double dx, int64_t d) { return Arg(vnn::trapezoid(y, dx, d)); },
      [&](const Tensor& x, int64_t d) { return Arg(vnn::trapezoid(y, x, d)); });
};
OPDB("trapz") {
  const Tensor& y = c.in();
  return trapezoid_call(
      c, [&](double dx, int64_t d) { return Arg(vnn::trapz(y, dx, d)); },
      [&](const Tensor& x, int64_t d) { return Arg(vnn::trapz(y, x, d)); });
};
OPDB("cumulative_trapezoid") {
  const Tensor& y = c.in();
  return trapezoid_call(
      c, [&](double dx, int64_t d) { return Arg(vnn::cumulative_trapezoid(y, dx, d)); },
      [&](const Tensor& x, int64_t d) { return Arg(vnn::cumulative_trapezoid(y, x, d)); });
};
OPDB("sum_to_size") {
  const Arg* s = c.get(0, "size");
  std::vector<int64_t> size;
  if (s && s->kind == Arg::Kind::list) {
    size = s->ints();
  } else {
    for (size_t i = 0; i < c.nargs(); ++i) size.push_back(c.get(i)->integer());
  }
  return vnn::sum_to_size(c.in(), Shape(size));
};
OPDB("renorm") {
  return vnn::renorm(c.in(), c.number(0, "p"), c.integer(1, "dim"), c.number(2, "maxnorm"));
};
OPDB("logspace") {
  if (c.input().kind == Arg::Kind::tensor) gap("logspace with tensor bounds");
  const double end = c.number(0, "end");
  const int64_t steps = c.integer(1, "steps");
  const double base = c.number(2, "base", 10.0);
  return vnn::logspace(c.input().number(), end, steps, base, c.options());
};
// The tensor overloads: 0-D tensor bounds stand for their values.
double bound(const Arg& a) { return a.kind == Arg::Kind::tensor ? a.t.item<double>() : a.number(); }
OPDB("linspace.tensor_overload") {
  const double end = bound(*c.get(0, "end"));
  return vnn::linspace(bound(c.input()), end, c.integer(1, "steps"), c.options());
};
OPDB("logspace.tensor_overload") {
  const double end = bound(*c.get(0, "end"));
  const int64_t steps = c.integer(1, "steps");
  return vnn::logspace(bound(c.input()), end, steps, c.number(2, "base", 10.0), c.options());
};

}  // namespace
}  // namespace vnn::opdb
