// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The random samplers of vnn/samplers.h: transforms of Philox uniform and
// normal draws (vnn/random.h), drawn in float64 on the tensor's device so
// that every device computes the same numbers from one seed.
#include "vnn/samplers.h"

#include <cmath>
#include <limits>

#include "ops/shape_common.hpp"
#include "vnn/autograd.h"
#include "vnn/elementwise.h"
#include "vnn/reduction.h"
#include "vnn/shape_ops.h"

namespace vnn {

namespace {

// n uniform float64 draws in [0, 1) shaped like t, on t's device.
Tensor uniform_like(const Tensor& t, Generator* gen) {
  return rand(t.sizes(), TensorOptions(kFloat64).device(t.device()), gen);
}

void require_floating(const Tensor& t, const char* op) {
  VNN_CHECK(DTypeError, is_floating(t.dtype()), op, ": expected a floating tensor, got ", name(t.dtype()),
            "; draw into a float32 or float64 tensor and convert");
}

// Writes `values` into t (t keeps its dtype), outside autograd: a sample
// has no gradient.
Tensor& write(Tensor& t, const Tensor& values) {
  autograd::NoGradGuard no_grad;
  t.copy_(values);
  return t;
}

// The dtype a sampler returns for probabilities / moments given as tensors.
DType floating_of(DType t) { return is_floating(t) ? t : kFloat32; }

}  // namespace

Tensor bernoulli(const Tensor& p, Generator* gen) {
  detail::require_arg(p, "bernoulli", "input");
  require_floating(p, "bernoulli");
  VNN_CHECK(ValueError, p.numel() == 0 || all(logical_and(ge(p, 0.0), le(p, 1.0))).item() != 0.0,
            "bernoulli: expected every probability in [0, 1] (input of shape ", p.sizes(), ")");
  Tensor u = uniform_like(p, gen);
  return lt(u, p.detach().to(kFloat64)).to(p.dtype());
}

Tensor bernoulli(const Tensor& t, double p, Generator* gen) {
  detail::require_arg(t, "bernoulli", "input");
  VNN_CHECK(ValueError, p >= 0.0 && p <= 1.0, "bernoulli: expected p in [0, 1], got ", p);
  return lt(uniform_like(t, gen), p).to(floating_of(t.dtype()));
}

Tensor& bernoulli_(Tensor& t, double p, Generator* gen) {
  detail::require_arg(t, "bernoulli_", "self");
  VNN_CHECK(ValueError, p >= 0.0 && p <= 1.0, "bernoulli_: expected p in [0, 1], got ", p);
  return write(t, lt(uniform_like(t, gen), p));
}

Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* gen) {
  detail::require_arg(t, "bernoulli_", "self");
  detail::require_arg(p, "bernoulli_", "p");
  VNN_CHECK(ValueError, p.numel() == 0 || all(logical_and(ge(p, 0.0), le(p, 1.0))).item() != 0.0,
            "bernoulli_: expected every probability in [0, 1] (p of shape ", p.sizes(), ")");
  return write(t, lt(uniform_like(t, gen), p.detach().to(kFloat64)));
}

Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen) {
  detail::require_arg(mean, "normal", "mean");
  detail::require_arg(std, "normal", "std");
  VNN_CHECK(ValueError, std.numel() == 0 || all(ge(std, 0.0)).item() != 0.0,
            "normal: expected every std >= 0 (std of shape ", std.sizes(), ")");
  const DType dt = floating_of(promote_types(mean.dtype(), std.dtype()));
  const Shape shape = broadcast_shapes({mean.sizes(), std.sizes()});
  Tensor z = randn(shape, TensorOptions(kFloat64).device(mean.device()), gen);
  return add(mul(z, std.detach().to(kFloat64)), mean.detach().to(kFloat64)).to(dt);
}

Tensor normal(const Tensor& mean, double std, Generator* gen) {
  detail::require_arg(mean, "normal", "mean");
  VNN_CHECK(ValueError, std >= 0.0, "normal: expected std >= 0, got ", std);
  Tensor z = randn(mean.sizes(), TensorOptions(kFloat64).device(mean.device()), gen);
  return add(mul(z, std), mean.detach().to(kFloat64)).to(floating_of(mean.dtype()));
}

Tensor normal(double mean, const Tensor& std, Generator* gen) {
  detail::require_arg(std, "normal", "std");
  VNN_CHECK(ValueError, std.numel() == 0 || all(ge(std, 0.0)).item() != 0.0,
            "normal: expected every std >= 0 (std of shape ", std.sizes(), ")");
  Tensor z = randn(std.sizes(), TensorOptions(kFloat64).device(std.device()), gen);
  return add(mul(z, std.detach().to(kFloat64)), mean).to(floating_of(std.dtype()));
}

Tensor normal(double mean, double std, const Shape& size, const TensorOptions& opt, Generator* gen) {
  VNN_CHECK(ValueError, std >= 0.0, "normal: expected std >= 0, got ", std);
  Tensor t = empty(size, opt.with_requires_grad(false));
  normal_(t, mean, std, gen);
  return opt.requires_grad() ? t.requires_grad_(true) : t;
}

Tensor& exponential_(Tensor& t, double lambd, Generator* gen) {
  detail::require_arg(t, "exponential_", "self");
  require_floating(t, "exponential_");
  VNN_CHECK(ValueError, lambd > 0.0, "exponential_: expected lambd > 0, got ", lambd);
  return write(t, div(neg(log1p(neg(uniform_like(t, gen)))), lambd));
}

Tensor& geometric_(Tensor& t, double p, Generator* gen) {
  detail::require_arg(t, "geometric_", "self");
  VNN_CHECK(ValueError, p > 0.0 && p < 1.0, "geometric_: expected p in (0, 1), got ", p);
  // The trials up to the first success: ceil(log(1 - u) / log(1 - p)), at least 1.
  Tensor k = ceil(div(log1p(neg(uniform_like(t, gen))), std::log1p(-p)));
  return write(t, clamp_min(k, 1.0));
}

Tensor& cauchy_(Tensor& t, double median, double sigma, Generator* gen) {
  detail::require_arg(t, "cauchy_", "self");
  require_floating(t, "cauchy_");
  VNN_CHECK(ValueError, sigma > 0.0, "cauchy_: expected sigma > 0, got ", sigma);
  return write(t, add(mul(tan(mul(add(uniform_like(t, gen), -0.5), M_PI)), sigma), median));
}

Tensor& log_normal_(Tensor& t, double mean, double std, Generator* gen) {
  detail::require_arg(t, "log_normal_", "self");
  require_floating(t, "log_normal_");
  VNN_CHECK(ValueError, std > 0.0, "log_normal_: expected std > 0, got ", std);
  Tensor z = randn(t.sizes(), TensorOptions(kFloat64).device(t.device()), gen);
  return write(t, exp(add(mul(z, std), mean)));
}

Tensor& random_(Tensor& t, int64_t from, std::optional<int64_t> to, Generator* gen) {
  detail::require_arg(t, "random_", "self");
  int64_t hi = 0;
  if (to) {
    hi = *to;
  } else if (is_floating(t.dtype())) {
    // Every integer up to 2^digits is exact in the dtype, as PyTorch's bound.
    const int digits = t.dtype() == kFloat64 ? 53 : t.dtype() == kFloat32 ? 24 : t.dtype() == kFloat16 ? 11 : 8;
    hi = (int64_t(1) << digits) + 1;
  } else {
    switch (t.dtype()) {  // the dtype's largest value + 1
      case kBool: hi = 2; break;
      case kUInt8: hi = 256; break;
      case kInt8: hi = 128; break;
      case kInt16: hi = 32768; break;
      case kInt32: hi = int64_t(1) << 31; break;
      default: hi = std::numeric_limits<int64_t>::max();
    }
  }
  VNN_CHECK(ValueError, from < hi, "random_: expects from < to, got from=", from, " to=", hi);
  const double span = double(hi) - double(from);
  // floor(from + u (to - from)), u in [0, 1): an integer in [from, to).
  Tensor r = floor(add(mul(uniform_like(t, gen), span), double(from)));
  return write(t, clamp_max(r, double(hi - 1)));
}

Tensor& random_(Tensor& t, int64_t to, Generator* gen) { return random_(t, 0, to, gen); }

Tensor& random_(Tensor& t, Generator* gen) { return random_(t, 0, std::nullopt, gen); }

Tensor randint_like(const Tensor& t, int64_t low, int64_t high, Generator* gen) {
  detail::require_arg(t, "randint_like", "input");
  return randint(low, high, t.sizes(), TensorOptions(t.dtype()).device(t.device()), gen);
}

Tensor randint_like(const Tensor& t, int64_t high, Generator* gen) { return randint_like(t, 0, high, gen); }

}  // namespace vnn
