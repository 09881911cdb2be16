// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// PyTorch's random samplers beyond rand / randn / randint (vnn/random.h):
// bernoulli, normal with tensor arguments, and the in-place distributions
// exponential_, geometric_, cauchy_, log_normal_, random_, with randint_like.
// Each transforms uniform (or normal) numbers from vnn's Philox streams
// (vnn/random.h), so one seed gives the same draws on every device (to an
// ulp of the transform's transcendentals), and each in-place form keeps
// the tensor's dtype. Bad parameters (p outside [0, 1], lambd <= 0, a
// negative std, from >= to) throw ValueError naming the op.
#pragma once
#include <cstdint>
#include <optional>

#include "vnn/random.h"
#include "vnn/tensor.h"

namespace vnn {

/// 1 with probability p[i], else 0, in p's floating dtype (p in [0, 1]).
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
/// 1 with probability p, else 0, in t's shape and floating dtype.
Tensor bernoulli(const Tensor& t, double p, Generator* gen = nullptr);
/// t filled with bernoulli(p) draws (any dtype but the halves' storage: 0/1).
Tensor& bernoulli_(Tensor& t, double p = 0.5, Generator* gen = nullptr);
/// t filled with draws of probability p[i] (p broadcasts to t).
Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* gen = nullptr);

/// Normal draws with per-element mean and std (broadcast together).
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen = nullptr);
/// Normal draws with a per-element mean and one std.
Tensor normal(const Tensor& mean, double std = 1.0, Generator* gen = nullptr);
/// Normal draws with one mean and per-element std.
Tensor normal(double mean, const Tensor& std, Generator* gen = nullptr);
/// Normal draws of shape `size`.
Tensor normal(double mean, double std, const Shape& size, const TensorOptions& opt = {}, Generator* gen = nullptr);

/// Exponential draws with rate lambd: -log(1 - u) / lambd (floating t).
Tensor& exponential_(Tensor& t, double lambd = 1.0, Generator* gen = nullptr);
/// Geometric draws (trials to the first success, from 1) with success probability p in (0, 1).
Tensor& geometric_(Tensor& t, double p, Generator* gen = nullptr);
/// Cauchy draws: median + sigma tan(pi (u - 1/2)) (floating t).
Tensor& cauchy_(Tensor& t, double median = 0.0, double sigma = 1.0, Generator* gen = nullptr);
/// Log-normal draws: exp of normal(mean, std) (floating t).
Tensor& log_normal_(Tensor& t, double mean = 1.0, double std = 2.0, Generator* gen = nullptr);
/// Integers uniform in [from, to) (to absent: up to 2^mantissa bits of a
/// floating dtype, or the integer dtype's max + 1), in t's dtype.
Tensor& random_(Tensor& t, int64_t from, std::optional<int64_t> to, Generator* gen = nullptr);
/// Integers uniform in [0, to).
Tensor& random_(Tensor& t, int64_t to, Generator* gen = nullptr);
/// Integers uniform over [0, 2^mantissa bits] (floating) or [0, max] (integer), as PyTorch's random_().
Tensor& random_(Tensor& t, Generator* gen = nullptr);

/// randint(low, high) in t's shape, dtype and device.
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, Generator* gen = nullptr);
/// randint(0, high) in t's shape, dtype and device.
Tensor randint_like(const Tensor& t, int64_t high, Generator* gen = nullptr);

}  // namespace vnn
