// Random numbers: the core reserves Philox counters from a Generator and
// the backend's VNN_OP_RANDOM fills the output (see include/vnn/random.h).
#include "vnn/detail/message.h"
#include "vnn/random.h"

#include <algorithm>
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
  std::vector<int64_t> p = detail::host_vector<int64_t>(n, "randperm");  // checks n first
  Generator& g = pick(gen);
  uint64_t seed = 0;
  // Two words (one 64-bit number) per swap.
  const uint64_t offset = g.reserve(2 * n, &seed);
  std::iota(p.begin(), p.end(), int64_t(0));
  uint32_t c[4] = {};
  for (int64_t j = n - 1, s = 0; j > 0; --j, ++s) {
    const uint64_t ctr = offset + uint64_t(s) / 2u;
    if (s % 2 == 0) {
      c[0] = uint32_t(ctr);
      c[1] = uint32_t(ctr >> 32);
      c[2] = c[3] = 0;
      philox4x32_10(c, uint32_t(seed), uint32_t(seed >> 32));
    }
    const int w = int(s % 2) * 2;
    const uint64_t r = (uint64_t(c[w]) << 32) | c[w + 1];
    std::swap(p[size_t(j)], p[size_t(r % uint64_t(j + 1))]);
  }
  return from_vector(p, {n}).to(opt.device(), opt.dtype_or(kInt64));
}

Tensor rand_like(const Tensor& t, Generator* gen) {
  return rand(t.sizes(), TensorOptions(t.device()).with(t.dtype()), gen);
}

Tensor randn_like(const Tensor& t, Generator* gen) {
  return randn(t.sizes(), TensorOptions(t.device()).with(t.dtype()), gen);
}

}  // namespace vnn
