// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of the random ops (vnn/random.h, vnn/samplers.h). Their
// values are random: the runner compares shape and dtype (export_opdb.py's
// SHAPE_ONLY), and test_ops_samplers checks the distributions.
#include "opdb.hpp"
#include "vnn/samplers.h"

namespace vnn::opdb {
namespace {

// op_db's in-place samplers run on a clone of the input.
Tensor fresh(Call& c) { return c.in().detach().clone(); }

OPDB("bernoulli") {
  if (const Arg* p = c.get(0, "p")) return vnn::bernoulli(c.in(), p->number());
  return vnn::bernoulli(c.in());
};
OPDB("normal") {
  const Arg* std = c.get(0, "std");
  if (std->kind == Arg::Kind::tensor) return vnn::normal(c.in(), std->t);
  return vnn::normal(c.in(), std->number());
};
OPDB("normal.in_place") {
  Tensor t = fresh(c);
  return t.normal_(c.number(0, "mean", 0.0), c.number(1, "std", 1.0));
};
OPDB("normal.number_mean") {
  const double mean = c.input().number();
  const Arg* std = c.get(0, "std");
  if (std->kind == Arg::Kind::tensor) return vnn::normal(mean, std->t);
  return vnn::normal(mean, std->number(), Shape(c.ints(1, "size", {})), c.options());
};
OPDB("uniform") {
  Tensor t = fresh(c);
  return t.uniform_(c.number(0, "from", 0.0), c.number(1, "to", 1.0));
};
OPDB("exponential") {
  Tensor t = fresh(c);
  return vnn::exponential_(t, c.number(0, "lambd", 1.0));
};
OPDB("geometric") {
  Tensor t = fresh(c);
  return vnn::geometric_(t, c.number(0, "p"));
};
OPDB("cauchy") {
  Tensor t = fresh(c);
  return vnn::cauchy_(t, c.number(0, "median", 0.0), c.number(1, "sigma", 1.0));
};
OPDB("log_normal") {
  Tensor t = fresh(c);
  return vnn::log_normal_(t, c.number(0, "mean", 1.0), c.number(1, "std", 2.0));
};
OPDB("randint") {
  // randint(high, size) or randint(low, high, size).
  const int64_t first = c.input().integer();
  const Arg* second = c.get(0);
  if (second->kind == Arg::Kind::list) return vnn::randint(first, Shape(second->ints()), c.options(kInt64));
  return vnn::randint(first, second->integer(), Shape(c.ints(1, "size", {})), c.options(kInt64));
};
OPDB("randint_like") {
  const int64_t first = c.integer(0, "high");
  if (const Arg* high = c.get(1, "high")) return vnn::randint_like(c.in(), first, high->integer());
  return vnn::randint_like(c.in(), first);
};
OPDB("randn") { return vnn::randn(Shape(c.input().ints()), c.options()); };
// *_like with dtype= or device=: the options' tensor of the input's shape.
bool like_options_given(Call& c) {
  const bool given = c.kw("dtype") || c.kw("device");
  return given;
}
OPDB("randn_like") {
  if (like_options_given(c)) return vnn::randn(c.in().sizes(), c.options(c.in().dtype()));
  return vnn::randn_like(c.in());
};
OPDB("rand_like") {
  if (like_options_given(c)) return vnn::rand(c.in().sizes(), c.options(c.in().dtype()));
  return vnn::rand_like(c.in());
};
OPDB("multinomial") {
  return vnn::multinomial(c.in(), c.integer(0, "num_samples"), c.boolean(1, "replacement", false));
};

}  // namespace
}  // namespace vnn::opdb
