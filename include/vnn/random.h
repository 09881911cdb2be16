// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Counter-based random numbers (Philox4x32-10), with PyTorch's names.
//
// A Generator is a (seed, offset) pair. Each call that draws n values
// reserves ceil(n / 4) Philox counters starting at the generator's offset
// and advances the offset past them (thread-safe). Element i of the result
// is word i % 4 of Philox4x32-10(key = seed, counter = offset + i / 4), so
// the values depend only on (seed, offset, i): every backend and any thread
// count gives the same numbers (float32 uniform bit for bit, normal to
// within an ulp or so of the transcendentals).
//  - rand / uniform_: float32 uses the top 24 bits, (x >> 8) * 2^-24,
//    float64 all 32, x * 2^-32; other floating dtypes are drawn as float32
//    and converted.
//  - randn / normal_: Box-Muller on word pairs (0, 1) and (2, 3).
//  - randint: low + x mod (high - low) for a 32-bit word x (ranges beyond
//    2^32 only reach the first 2^32 values); int64 by default.
//  - randperm: a stable argsort on the requested device of one 64-bit
//    key per position (two 31-bit words: high * 2^31 + low); int64 by default.
#pragma once
#include <cstdint>
#include <mutex>

#include "vnn/tensor.h"

namespace vnn {

/// A Philox4x32-10 stream: a (seed, offset) pair advanced atomically by each draw (thread-safe).
class Generator {
 public:
  /// A generator seeded with `seed`, counter at 0.
  explicit Generator(uint64_t seed = 67280421310721ull) : seed_(seed) {}
  /// A copy with the same seed and offset (then independent).
  Generator(const Generator& other);
  /// Takes other's seed and offset.
  Generator& operator=(const Generator& other);

  /// Sets the seed and restarts the counter at 0.
  Generator& manual_seed(uint64_t seed);
  /// The seed.
  uint64_t seed() const;
  /// The next unused counter.
  uint64_t offset() const;
  /// Moves the counter to `offset` (to replay or skip draws).
  void set_offset(uint64_t offset);
  /// Reserves counters for n values; returns the first counter and, where
  /// seed is given, the seed they go with (read under the same lock).
  uint64_t reserve(int64_t n, uint64_t* seed = nullptr);

 private:
  mutable std::mutex mutex_;
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
};

/// The process-wide generator used when none is passed.
Generator& default_generator();
/// Seeds the default generator (and restarts its counter).
void manual_seed(uint64_t seed);

/// Philox4x32-10 of one block, in place: ctr[4] with key (k0, k1).
void philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1);

/// Uniform values in [0, 1), float32 unless opt names a floating dtype.
Tensor rand(const Shape& shape, const TensorOptions& opt = {}, Generator* gen = nullptr);
/// Standard normal values (Box-Muller), float32 unless opt names a floating dtype.
Tensor randn(const Shape& shape, const TensorOptions& opt = {}, Generator* gen = nullptr);
/// Integers in [low, high); int64 unless opt names a dtype (passing only a
/// Device keeps int64: randint(0, 10, {8}, device)).
Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& opt = {}, Generator* gen = nullptr);
/// randint(0, high, shape): integers in [0, high).
Tensor randint(int64_t high, const Shape& shape, const TensorOptions& opt = {}, Generator* gen = nullptr);
/// A random permutation of 0 .. n-1; int64 unless opt names a dtype.
Tensor randperm(int64_t n, const TensorOptions& opt = {}, Generator* gen = nullptr);
/// num_samples int64 category indices per row of `probs` ([C] or [R, C]:
/// non-negative, finite weights, not necessarily normalised), as
/// torch.multinomial. With replacement each draw takes one Philox word
/// (inverse CDF); without, each category takes one word w and the
/// categories with the smallest -log(u(w)) / p come first (the exponential
/// race, the law of drawing one by one without replacement). Drawn on the
/// host from `gen` (the default generator when null), so one seed gives one
/// draw on every device; the result lives on probs' device.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false, Generator* gen = nullptr);
/// Uniform [0, 1) values with t's shape, dtype and device.
Tensor rand_like(const Tensor& t, Generator* gen = nullptr);
/// Standard normal values with t's shape, dtype and device.
Tensor randn_like(const Tensor& t, Generator* gen = nullptr);

// In place, any strides: uniform on [low, high), normal(mean, std).
/// Fills t in place (any strides) with uniform values in [low, high).
Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0, Generator* gen = nullptr);
/// Fills t in place (any strides) with normal values of `mean` and `std`.
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);

// LibTorch's argument order, the generator before the options:
//   vnn::Generator gen(42);  vnn::randint(0, 10, {8}, gen, vnn::device(dev));
/// rand(shape, opt, &gen).
inline Tensor rand(const Shape& shape, Generator& gen, const TensorOptions& opt = {}) { return rand(shape, opt, &gen); }
/// randn(shape, opt, &gen).
inline Tensor randn(const Shape& shape, Generator& gen, const TensorOptions& opt = {}) {
  return randn(shape, opt, &gen);
}
/// randint(low, high, shape, opt, &gen).
inline Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen, const TensorOptions& opt = {}) {
  return randint(low, high, shape, opt, &gen);
}
/// randint(high, shape, opt, &gen).
inline Tensor randint(int64_t high, const Shape& shape, Generator& gen, const TensorOptions& opt = {}) {
  return randint(high, shape, opt, &gen);
}
/// randperm(n, opt, &gen).
inline Tensor randperm(int64_t n, Generator& gen, const TensorOptions& opt = {}) { return randperm(n, opt, &gen); }

}  // namespace vnn
