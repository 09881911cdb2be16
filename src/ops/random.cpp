// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Random numbers: the core reserves Philox counters from a Generator and
// the backend's VNN_OP_RANDOM fills the output (see include/vnn/random.h).
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/random.h"
#include "vnn/sorting.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/error.h"
#include "vnn/philox.h"

namespace vnn {

Generator::Generator(const Generator& other) {
  std::lock_guard<std::mutex> lock(other.mutex_);
  seed_ = other.seed_;
  offset_ = other.offset_;
}

Generator& Generator::operator=(const Generator& other) {
  if (this == &other) return *this;
  uint64_t s, o;
  {
    std::lock_guard<std::mutex> lock(other.mutex_);
    s = other.seed_;
    o = other.offset_;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = s;
  offset_ = o;
  return *this;
}

Generator& Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = 0;
  return *this;
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seed_;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return offset_;
}

void Generator::set_offset(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  offset_ = offset;
}

uint64_t Generator::reserve(int64_t n, uint64_t* seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (seed) *seed = seed_;
  uint64_t start = offset_;
  offset_ += (uint64_t(std::max<int64_t>(n, 0)) + 3u) / 4u;
  return start;
}

Generator& default_generator() {
  static Generator* g = new Generator();  // never destroyed: usable from exit paths
  return *g;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

void philox4x32_10(uint32_t c[4], uint32_t k0, uint32_t k1) { vnn_philox_rounds(c, k0, k1); }

namespace {

Generator& pick(Generator* gen) { return gen ? *gen : default_generator(); }

// Fills t in place. The backend writes float32/float64 (UNIFORM, NORMAL)
// and int32/int64 (BITS); other dtypes go through a temporary of the
// closest of those and a converting copy.
Tensor& fill_random(Tensor& t, vnn_random_fn fn, double a, double b, Generator* gen, const char* name) {
  DType direct;
  if (fn == VNN_RANDOM_BITS) {
    direct = t.dtype() == kInt32 ? kInt32 : kInt64;  // other dtypes convert the int64 values
  } else {
    VNN_CHECK(DTypeError, is_floating(t.dtype()), name, ": needs a floating dtype, got ", vnn::name(t.dtype()));
    direct = t.dtype() == kFloat64 ? kFloat64 : kFloat32;
  }
  detail::mark_modified(t, name);  // saved copies of t are now stale
  Generator& g = pick(gen);
  const int64_t n = t.numel();
  uint64_t seed = 0;
  const uint64_t offset = g.reserve(n, &seed);
  if (n == 0) return t;
  if (direct == t.dtype()) {
    detail::enqueue(VNN_OP_RANDOM, name, {}, t, {a, b}, {int64_t(fn), int64_t(seed), int64_t(offset)});
    return t;
  }
  Tensor tmp = detail::make_empty(t.impl()->ctx(), t.sizes(), direct);
  detail::enqueue(VNN_OP_RANDOM, name, {}, tmp, {a, b}, {int64_t(fn), int64_t(seed), int64_t(offset)});
  t.copy_(tmp);
  return t;
}

}  // namespace

Tensor& uniform_(Tensor& t, double low, double high, Generator* gen) {
  VNN_CHECK(ValueError, low <= high, "uniform_: expects low <= high, got low=", low, " high=", high);
  return fill_random(t, VNN_RANDOM_UNIFORM, low, high, gen, "uniform_");
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  VNN_CHECK(ValueError, std >= 0.0, "normal_: expects std >= 0.0, got std=", std);
  return fill_random(t, VNN_RANDOM_NORMAL, mean, std, gen, "normal_");
}

Tensor rand(const Shape& shape, const TensorOptions& opt, Generator* gen) {
  detail::checked_nbytes(shape, opt.dtype(), "rand");  // size errors name rand, not empty
  Tensor t = empty(shape, opt.with_requires_grad(false));
  return detail::finish_creation(uniform_(t, 0.0, 1.0, gen), opt);
}

Tensor randn(const Shape& shape, const TensorOptions& opt, Generator* gen) {
  detail::checked_nbytes(shape, opt.dtype(), "randn");  // size errors name randn, not empty
  Tensor t = empty(shape, opt.with_requires_grad(false));
  return detail::finish_creation(normal_(t, 0.0, 1.0, gen), opt);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& opt, Generator* gen) {
  if (high <= low) VNN_THROW(ValueError, "randint: expects low < high, got low=", low, " high=", high);
  // int64 unless a dtype was given: a Device alone keeps the default.
  TensorOptions o = opt.with(opt.dtype_or(kInt64));
  detail::checked_nbytes(shape, o.dtype(), "randint");
  Tensor t = empty(shape, o);
  return fill_random(t, VNN_RANDOM_BITS, double(low), double(high), gen, "randint");
}

Tensor randint(int64_t high, const Shape& shape, const TensorOptions& opt, Generator* gen) {
  return randint(0, high, shape, opt, gen);
}

Tensor randperm(int64_t n, const TensorOptions& opt, Generator* gen) {
  if (n < 0) VNN_THROW(ValueError, "randperm: n must be non-negative, got ", n);
  // A 62-bit Philox key per position (two words of 31 bits, so the key
  // fits int64 without overflow; collisions are negligible, and the stable
  // sort orders any by position), sorted on the device: the same
  // permutation on every device for one seed.
  detail::checked_nbytes({n, 2}, kInt64, "randperm");
  const TensorOptions longs = TensorOptions(opt.device()).with(kInt64);
  Tensor words = empty({n, 2}, longs);
  fill_random(words, VNN_RANDOM_BITS, 0.0, 2147483648.0, gen, "randperm");
  Tensor keys = add(mul(words.select(1, 0), full({}, 2147483648.0, longs)), words.select(1, 1));
  return argsort(keys).to(opt.dtype_or(kInt64));
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  VNN_CHECK(ValueError, probs.defined(), "multinomial: argument 'probs' is an undefined tensor");
  VNN_CHECK(ShapeError, probs.dim() == 1 || probs.dim() == 2,
            "multinomial: probs must be 1-D [categories] or 2-D [rows, categories], got shape ", probs.sizes());
  VNN_CHECK(DTypeError, is_floating(probs.dtype()), "multinomial: probs must have a floating dtype, got ",
            name(probs.dtype()));
  const int64_t cats = probs.size(-1), rows = probs.dim() == 2 ? probs.size(0) : 1;
  VNN_CHECK(ValueError, cats > 0, "multinomial: probs of shape ", probs.sizes(), " has no categories");
  VNN_CHECK(ValueError, num_samples > 0, "multinomial: num_samples must be positive, got ", num_samples);
  VNN_CHECK(ValueError, replacement || num_samples <= cats, "multinomial: cannot draw ", num_samples,
            " samples without replacement from ", cats, " categories; pass replacement = true or fewer samples");
  const std::vector<double> p = probs.detach().to_vector<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    int64_t nonzero = 0;
    for (int64_t c = 0; c < cats; ++c) {
      const double v = p[size_t(r * cats + c)];
      VNN_CHECK(ValueError, std::isfinite(v) && v >= 0, "multinomial: probs must be finite and non-negative, row ", r,
                " category ", c, " is ", v);
      total += v;
      nonzero += v > 0;
    }
    VNN_CHECK(ValueError, total > 0, "multinomial: row ", r, " of probs sums to zero; every row needs a positive weight");
    VNN_CHECK(ValueError, replacement || nonzero >= num_samples, "multinomial: row ", r, " has ", nonzero,
              " categories of positive weight, too few for ", num_samples, " samples without replacement");
  }
  Generator& g = pick(gen);
  uint64_t seed = 0;
  const int64_t per_row = replacement ? num_samples : cats;
  const uint64_t offset = g.reserve(rows * per_row, &seed);
  // Word i of the draw is word i % 4 of Philox(key = seed, counter = offset + i / 4), as VNN_OP_RANDOM's layout;
  // u(w) = (w + 1/2) / 2^32 lies in (0, 1).
  uint32_t block[4] = {};
  uint64_t block_ctr = ~uint64_t(0);
  auto uniform = [&](int64_t i) {
    const uint64_t ctr = offset + uint64_t(i) / 4u;
    if (ctr != block_ctr) {
      block[0] = uint32_t(ctr);
      block[1] = uint32_t(ctr >> 32);
      block[2] = block[3] = 0;
      philox4x32_10(block, uint32_t(seed), uint32_t(seed >> 32));
      block_ctr = ctr;
    }
    return (double(block[i % 4]) + 0.5) * 0x1p-32;
  };
  std::vector<int64_t> out(size_t(rows * num_samples));
  std::vector<double> work(static_cast<size_t>(cats));
  std::vector<int64_t> order(static_cast<size_t>(cats));
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = p.data() + r * cats;
    int64_t* dst = out.data() + r * num_samples;
    if (replacement) {
      // Inverse CDF; the last category of positive weight catches rounding at the top.
      int64_t last = 0;
      double acc = 0;
      for (int64_t c = 0; c < cats; ++c) {
        acc += row[c];
        work[size_t(c)] = acc;
        if (row[c] > 0) last = c;
      }
      for (int64_t s = 0; s < num_samples; ++s) {
        const double target = uniform(r * per_row + s) * acc;
        int64_t c = std::upper_bound(work.begin(), work.end(), target) - work.begin();
        dst[s] = std::min(c, last);
      }
    } else {
      // The exponential race: category c finishes at E_c / p_c with E_c = -log(u); the first num_samples win.
      for (int64_t c = 0; c < cats; ++c)
        work[size_t(c)] = row[c] > 0 ? -std::log(uniform(r * per_row + c)) / row[c] : INFINITY;
      std::iota(order.begin(), order.end(), int64_t(0));
      std::partial_sort(order.begin(), order.begin() + num_samples, order.end(), [&](int64_t a, int64_t b) {
        return work[size_t(a)] < work[size_t(b)] || (work[size_t(a)] == work[size_t(b)] && a < b);
      });
      std::copy(order.begin(), order.begin() + num_samples, dst);
    }
  }
  Shape shape = probs.dim() == 2 ? Shape{rows, num_samples} : Shape{num_samples};
  return from_vector(out, shape).to(probs.device());
}

Tensor rand_like(const Tensor& t, Generator* gen) {
  return rand(t.sizes(), TensorOptions(t.device()).with(t.dtype()), gen);
}

Tensor randn_like(const Tensor& t, Generator* gen) {
  return randn(t.sizes(), TensorOptions(t.device()).with(t.dtype()), gen);
}

}  // namespace vnn
