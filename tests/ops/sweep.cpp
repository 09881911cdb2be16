// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Cross-backend consistency sweep: every public op x every dtype x the
// device under test. Each accepted (op, dtype) pair runs on three inputs (a
// small contiguous one, a non-contiguous transposed view, and one above the
// 32768-element inline grain) and is compared with
//   1. the same op on the cpu reference device in the same dtype, and
//   2. the op on the cpu in float64, rounded to the result's dtype
//      (skipped only where the dtype's own arithmetic wraps, e.g. uint8 neg);
// with per-dtype tolerances. A pair the op rejects must throw DTypeError.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

const DType kAll[] = {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool, kFloat16, kBFloat16};

bool is_half(DType t) { return t == kFloat16 || t == kBFloat16; }
bool is_int_like(DType t) { return !is_floating(t); }

// Relative tolerance by the result's dtype (the reference is rounded to it).
double rtol(DType t) {
  switch (t) {
    case kFloat64: return 1e-12;
    case kFloat32: return 2e-5;
    case kFloat16: return 2e-3;
    case kBFloat16: return 1.6e-2;
    default: return 0;
  }
}

struct Inputs {
  Tensor x, y, p;  // signed, signed, positive (log/sqrt domain)
};

// Deterministic values that every dtype holds exactly: integers -5..5
// (0..9 for uint8, 0/1 for bool), plus quarters for floating dtypes.
Tensor values(const Shape& s, DType t, int salt, bool positive) {
  int64_t n = s.numel();
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t h = (i * 7919 + salt * 104729) % 11;
    double q = is_floating(t) ? double((i * 31 + salt) % 4) * 0.25 : 0.0;
    if (t == kBool) v[size_t(i)] = double(h % 2);
    else if (t == kUInt8 || positive) v[size_t(i)] = double(h) + q + (positive ? 0.5 : 0.0);
    else v[size_t(i)] = double(h - 5) + q;
  }
  return from_vector(v, s).to(t);
}

std::vector<Inputs> make_inputs(DType t, const Device& dev, bool on_dev) {
  Device d = on_dev ? dev : Device("cpu", 0);
  std::vector<Inputs> in;
  Shape small{5, 7}, big{3, 12000};
  in.push_back({values(small, t, 1, false).to(d), values(small, t, 2, false).to(d), values(small, t, 3, true).to(d)});
  // non-contiguous: a transpose of [7, 5]
  in.push_back({values({7, 5}, t, 4, false).to(d).transpose(0, 1), values({7, 5}, t, 5, false).to(d).transpose(0, 1),
                values({7, 5}, t, 6, true).to(d).transpose(0, 1)});
  in.push_back({values(big, t, 7, false).to(d), values(big, t, 8, false).to(d), values(big, t, 9, true).to(d)});
  return in;
}

using OpFn = std::function<Tensor(const Inputs&)>;

struct OpCase {
  std::string name;
  OpFn fn;
  std::function<bool(DType)> accepts;       // false: must throw DTypeError
  std::function<bool(DType)> f64_ref = {};  // false: skip the float64 reference
};

auto any_dtype = [](DType) { return true; };
auto not_bool = [](DType t) { return t != kBool; };
auto floating = [](DType t) { return is_floating(t); };
auto float_or_int = [](DType t) { return t != kBool; };
auto no_unsigned_wrap = [](DType t) { return t != kUInt8; };
auto nn_dtypes = [](DType t) { return is_floating(t); };  // nn_ops.h: images are floating (16-bit included)
// Index tensors on x's device: columns {c-1, 0, 2, 0} and, per row, 3 columns.
Tensor column_index(const Tensor& x) {
  int64_t c = x.size(1);
  return from_vector(std::vector<int64_t>{c - 1, 0, 2, 0}, {4}).to(x.device());
}
Tensor gather_index(const Tensor& x) {
  int64_t r = x.size(0), c = x.size(1);
  std::vector<int64_t> v(static_cast<size_t>(r * 3));
  for (int64_t i = 0; i < r * 3; ++i) v[size_t(i)] = (i * 5 + 1) % c;
  return from_vector(v, {r, 3}).to(x.device());
}
TensorOptions like(const Tensor& x) { return TensorOptions(x.device()).with(x.dtype()); }
Tensor image(const Tensor& x) { return x.reshape({1, 1, x.size(0), x.size(1)}); }
auto mm_dtypes = [](DType t) { return t != kBool && t != kUInt8; };  // halves compute in float32

std::vector<OpCase> op_table() {
  std::vector<OpCase> ops = {
      // unary
      {"neg", [](const Inputs& a) { return neg(a.x); }, not_bool, no_unsigned_wrap},
      {"abs", [](const Inputs& a) { return abs(a.x); }, not_bool},
      {"relu", [](const Inputs& a) { return relu(a.x); }, not_bool},
      {"exp", [](const Inputs& a) { return exp(a.x); }, any_dtype},
      {"log", [](const Inputs& a) { return log(a.p); }, any_dtype},
      {"sqrt", [](const Inputs& a) { return sqrt(a.p); }, any_dtype},
      {"sigmoid", [](const Inputs& a) { return sigmoid(a.x); }, any_dtype},
      {"tanh", [](const Inputs& a) { return tanh(a.x); }, any_dtype},
      // binary (same shape, broadcast, scalars)
      {"add", [](const Inputs& a) { return a.x + a.y; }, any_dtype},
      {"add_alpha", [](const Inputs& a) { return add(a.x, a.y, 2.0); }, any_dtype},
      {"sub", [](const Inputs& a) { return a.x - a.y; }, any_dtype, no_unsigned_wrap},
      {"mul", [](const Inputs& a) { return a.x * a.y; }, any_dtype},
      {"div", [](const Inputs& a) { return a.x / a.p; }, any_dtype},
      {"maximum", [](const Inputs& a) { return maximum(a.x, a.y); }, any_dtype},
      {"minimum", [](const Inputs& a) { return minimum(a.x, a.y); }, any_dtype},
      {"add_scalar", [](const Inputs& a) { return a.x + 3.0; }, any_dtype},
      {"mul_scalar", [](const Inputs& a) { return a.x * 0.5; }, any_dtype},
      {"add_broadcast", [](const Inputs& a) { return a.x + a.y.narrow(0, 0, 1); }, any_dtype},
      // reductions
      {"sum", [](const Inputs& a) { return sum(a.x); }, any_dtype},
      {"sum_dim1", [](const Inputs& a) { return sum(a.x, 1); }, any_dtype},
      {"sum_dims_keepdim", [](const Inputs& a) { return sum(a.x, {0, 1}, true); }, any_dtype},
      {"mean_dim0_keepdim", [](const Inputs& a) { return mean(a.x, 0, true); }, floating},
      {"prod_dim0", [](const Inputs& a) { return prod(a.x, 0); }, any_dtype},
      {"amax_dim1", [](const Inputs& a) { return amax(a.x, {1}); }, any_dtype},
      {"amin_keepdim", [](const Inputs& a) { return amin(a.x, {0}, true); }, any_dtype},
      {"max_all", [](const Inputs& a) { return max(a.x); }, any_dtype},
      {"max_dim_values", [](const Inputs& a) { return std::get<0>(max(a.x, 1)); }, any_dtype},
      {"min_dim_indices", [](const Inputs& a) { return std::get<1>(min(a.x, 0, true)); }, any_dtype},
      {"argmax_dim1", [](const Inputs& a) { return argmax(a.x, 1); }, any_dtype},
      {"argmin", [](const Inputs& a) { return argmin(a.x); }, any_dtype},
      {"var_dim1", [](const Inputs& a) { return var(a.x, 1); }, floating},
      {"std_keepdim", [](const Inputs& a) { return vnn::std(a.x, {0}, 0, true); }, floating},
      {"norm2_dim1", [](const Inputs& a) { return norm(a.x, 2, {1}); }, floating},
      {"norm1", [](const Inputs& a) { return norm(a.x, 1); }, floating},
      {"norm_inf", [](const Inputs& a) { return norm(a.x, INFINITY, {0}); }, floating},
      {"logsumexp_dim1", [](const Inputs& a) { return logsumexp(a.x, 1); }, float_or_int},
      {"any_dim1", [](const Inputs& a) { return any(a.x, 1); }, any_dtype},
      {"all_dim0", [](const Inputs& a) { return all(a.x, 0, true); }, any_dtype},
      {"softmax_dim1", [](const Inputs& a) { return softmax(a.x, 1); }, floating},
      {"log_softmax_dim0", [](const Inputs& a) { return log_softmax(a.x, 0); }, floating},
      // matmul, batched: [2, r, c/2] @ [2, c/2, 3]
      {"matmul_batched",
       [](const Inputs& a) {
         int64_t r = a.x.size(0), c = a.x.size(1) / 2 * 2;
         Tensor b = a.x.narrow(1, 0, c).contiguous().view({2, r, c / 2});
         Tensor w = a.y.narrow(1, 0, 6).contiguous().view({r, 3, 2}).narrow(0, 0, 2).transpose(1, 2);
         Tensor w2 = w.narrow(1, 0, 1).expand({2, c / 2, 3}).contiguous();
         return matmul(b, w2);
       },
       mm_dtypes},
      {"mm", [](const Inputs& a) { return mm(a.x, a.y.transpose(0, 1)); }, mm_dtypes},
      {"matmul_vector", [](const Inputs& a) { return matmul(a.x, a.y.select(0, 0)); }, mm_dtypes},
      {"mean_all", [](const Inputs& a) { return mean(a.x); }, floating},
      // creation in the input's dtype on its device (creation.h, tensor.h)
      {"linspace", [](const Inputs& a) { return linspace(-2, 5, 11, like(a.x)); }, any_dtype},
      {"eye", [](const Inputs& a) { return eye(a.x.size(0), a.x.size(1), like(a.x)); }, any_dtype},
      {"arange", [](const Inputs& a) { return arange(0, 9, 2, like(a.x)); }, any_dtype},
      {"full", [](const Inputs& a) { return full({2, 3}, 3, like(a.x)); }, any_dtype},
      {"ones_like_dtype", [](const Inputs& a) { return ones_like(a.x, a.x.dtype()); }, any_dtype},
      {"full_like_options", [](const Inputs& a) { return full_like(a.x, 2, like(a.x)); }, any_dtype},
      // copies, conversions and views
      {"contiguous_of_transpose", [](const Inputs& a) { return a.x.transpose(0, 1).contiguous(); }, any_dtype},
      {"clone_narrow", [](const Inputs& a) { return a.x.narrow(1, 1, 3).clone(); }, any_dtype},
      {"select_permute", [](const Inputs& a) { return a.x.select(0, 1).contiguous(); }, any_dtype},
      {"expand_contiguous", [](const Inputs& a) { return a.x.narrow(0, 0, 1).expand({4, a.x.size(1)}).contiguous(); },
       any_dtype},
      {"reshape", [](const Inputs& a) { return a.x.reshape({-1}); }, any_dtype},
      // elementwise.h: more unary, scalar forms, pow, comparisons, logical, where
      {"log1p", [](const Inputs& a) { return log1p(a.p); }, any_dtype},
      {"rsqrt", [](const Inputs& a) { return rsqrt(a.p); }, any_dtype},
      {"sin", [](const Inputs& a) { return sin(a.x); }, any_dtype},
      {"cos", [](const Inputs& a) { return cos(a.x); }, any_dtype},
      {"erf", [](const Inputs& a) { return erf(a.x); }, any_dtype},
      {"reciprocal", [](const Inputs& a) { return reciprocal(a.p); }, any_dtype},
      {"leaky_relu", [](const Inputs& a) { return leaky_relu(a.x, 0.25); }, floating},
      {"gelu", [](const Inputs& a) { return gelu(a.x); }, floating},
      {"gelu_backward", [](const Inputs& a) { return gelu_backward(a.y, a.x); }, floating},
      {"silu", [](const Inputs& a) { return silu(a.x); }, floating},
      {"floor", [](const Inputs& a) { return floor(a.x * 0.5); }, any_dtype},
      {"ceil", [](const Inputs& a) { return ceil(a.x * 0.5); }, any_dtype},
      {"round", [](const Inputs& a) { return round(a.x * 0.5); }, any_dtype},
      {"sign", [](const Inputs& a) { return sign(a.x); }, not_bool},
      {"clamp", [](const Inputs& a) { return clamp(a.x, -2, 3); }, not_bool},
      {"pow_scalar", [](const Inputs& a) { return pow(a.x, 2.0); }, any_dtype},
      {"pow_tensor", [](const Inputs& a) { return pow(a.p, a.p); }, any_dtype, floating},  // integers wrap
      {"sub_scalar", [](const Inputs& a) { return a.x - 1.5; }, any_dtype},
      {"div_scalar", [](const Inputs& a) { return a.x / 4.0; }, any_dtype},
      {"rsub", [](const Inputs& a) { return 2.0 - a.x; }, any_dtype, no_unsigned_wrap},
      {"rdiv", [](const Inputs& a) { return 1.0 / a.p; }, any_dtype},
      {"eq", [](const Inputs& a) { return eq(a.x, a.y); }, any_dtype},
      {"ne_scalar", [](const Inputs& a) { return ne(a.x, 1.0); }, any_dtype},
      {"lt", [](const Inputs& a) { return lt(a.x, a.y); }, any_dtype},
      {"le_scalar", [](const Inputs& a) { return le(a.x, 0.0); }, any_dtype},
      {"gt", [](const Inputs& a) { return gt(a.x, a.y); }, any_dtype},
      {"ge", [](const Inputs& a) { return ge(a.x, a.y); }, any_dtype},
      {"logical_and", [](const Inputs& a) { return logical_and(a.x, a.y); }, any_dtype},
      {"logical_or", [](const Inputs& a) { return logical_or(a.x, a.y); }, any_dtype},
      {"logical_xor", [](const Inputs& a) { return logical_xor(a.x, a.y); }, any_dtype},
      {"logical_not", [](const Inputs& a) { return logical_not(a.x); }, any_dtype},
      {"where", [](const Inputs& a) { return where(gt(a.x, a.y), a.x, a.y); }, any_dtype},
      {"masked_fill", [](const Inputs& a) { return masked_fill(a.x, lt(a.x, a.y), 1.0); }, any_dtype},
      // indexing.h: joins, splits, index_select / gather / scatter_add
      {"cat_dim1", [](const Inputs& a) { return cat({a.x, a.y}, 1); }, any_dtype},
      {"stack_dim0", [](const Inputs& a) { return stack({a.x, a.y}, 0); }, any_dtype},
      {"split_last", [](const Inputs& a) { return split(a.x, 2, 1).back().contiguous(); }, any_dtype},
      {"unsqueeze_squeeze", [](const Inputs& a) { return squeeze(unsqueeze(a.x, 1)).contiguous(); }, any_dtype},
      {"index_select", [](const Inputs& a) { return index_select(a.x, 1, column_index(a.x)); }, any_dtype},
      {"gather", [](const Inputs& a) { return gather(a.x, 1, gather_index(a.x)); }, any_dtype},
      {"scatter_add",
       [](const Inputs& a) { return scatter_add(zeros_like(a.x), 1, gather_index(a.x), a.y.narrow(1, 0, 3)); },
       any_dtype},
      // nn primitives (nn_ops.h) on the inputs seen as images [1, 1, r, c]
      {"conv2d",
       [](const Inputs& a) {
         Tensor w = a.y.reshape({-1}).narrow(0, 0, 9).reshape({1, 1, 3, 3});
         return conv2d(image(a.x), w, a.p.reshape({-1}).narrow(0, 0, 1), 1, 1);
       },
       nn_dtypes},
      {"max_pool2d", [](const Inputs& a) { return max_pool2d(image(a.x), 2); }, nn_dtypes},
      {"avg_pool2d", [](const Inputs& a) { return avg_pool2d(image(a.x), {2, 3}, 1, 1); }, nn_dtypes},
      {"adaptive_avg_pool2d", [](const Inputs& a) { return adaptive_avg_pool2d(image(a.x), {2, 3}); }, nn_dtypes},
      {"adaptive_max_pool2d_indices",
       [](const Inputs& a) { return std::get<1>(adaptive_max_pool2d(image(a.x), {2, 3})); }, nn_dtypes},
      {"layer_norm", [](const Inputs& a) { return std::get<0>(layer_norm(a.x, {a.x.size(1)})); }, nn_dtypes},
      {"group_norm", [](const Inputs& a) { return std::get<0>(group_norm(a.x.reshape({1, a.x.size(0), -1}), 1)); },
       nn_dtypes},
      {"batch_norm_training",
       [](const Inputs& a) { return std::get<0>(batch_norm(a.x, Tensor(), Tensor(), Tensor(), Tensor(), true)); },
       nn_dtypes},
  };
  for (DType to : kAll)
    ops.push_back({std::string("to_") + name(to), [to](const Inputs& a) { return a.x.to(to); }, any_dtype,
                   // negative values converted to uint8 wrap in the source
                   // dtype's arithmetic, which a float64 detour does not model
                   [to](DType) { return to != kUInt8; }});
  return ops;
}

// |got - want| <= rtol * |want| + atol, elementwise on the host in float64;
// equal NaNs and equal infinities pass.
bool close(const Tensor& got, const Tensor& want, double tol, std::string* why) {
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype()) {
    *why = "shape/dtype " + got.sizes().str() + " " + name(got.dtype()) + " vs " + want.sizes().str() + " " +
           name(want.dtype());
    return false;
  }
  auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    if (g[i] == w[i]) continue;
    if (std::fabs(g[i] - w[i]) <= tol * std::fabs(w[i]) + tol) continue;
    *why = "element " + std::to_string(i) + ": " + std::to_string(g[i]) + " vs " + std::to_string(w[i]);
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("every op x every dtype on the device under test matches the cpu and float64 references") {
  Device dev = device_under_test();
  auto ops = op_table();
  int pairs = 0, rejected = 0, compared = 0, random_pairs = 0;
  for (DType t : kAll) {
    auto dut_in = make_inputs(t, dev, true);
    auto cpu_in = make_inputs(t, dev, false);
    std::vector<Inputs> f64_in;
    for (const auto& c : cpu_in) f64_in.push_back({c.x.to(kFloat64), c.y.to(kFloat64), c.p.to(kFloat64)});
    for (const auto& op : ops) {
      INFO(op.name << " " << name(t) << " on " << dev);
      ++pairs;
      if (!op.accepts(t)) {
        CHECK_THROWS_AS(op.fn(dut_in[0]), DTypeError);
        ++rejected;
        continue;
      }
      bool f64 = !op.f64_ref || op.f64_ref(t);
      for (size_t v = 0; v < dut_in.size(); ++v) {
        INFO("input variant " << v);
        Tensor got = op.fn(dut_in[v]);
        Tensor same = op.fn(cpu_in[v]);
        CHECK(got.device() == dev);
        std::string why;
        double tol = std::max(rtol(got.dtype()), rtol(t));
        if (is_int_like(got.dtype()) && is_half(t)) tol = 0;  // indices / bools are exact
        bool ok_cpu = close(got, same, tol, &why);
        {
          INFO("vs cpu " << name(t) << ": " << why);
          CHECK(ok_cpu);
        }
        if (f64) {
          Tensor ref = op.fn(f64_in[v]);
          // Round the float64 result to the result's dtype, as the op does.
          ref = ref.to(got.dtype());
          bool ok_f64 = close(got, ref, tol, &why);
          INFO("vs float64: " << why);
          CHECK(ok_f64);
        }
        ++compared;
      }
    }
  }
  // Random numbers with a fixed seed: the same counter-based stream on every
  // device, for every dtype the generators produce.
  for (DType t : {kFloat32, kFloat64}) {
    Generator g1, g2;
    g1.manual_seed(1234);
    g2.manual_seed(1234);
    std::string why;
    CHECK(close(rand({3, 12000}, TensorOptions(dev).with(t), &g1), rand({3, 12000}, TensorOptions(t), &g2), 0, &why));
    CHECK(close(randn({5, 7}, TensorOptions(dev).with(t), &g1), randn({5, 7}, TensorOptions(t), &g2), 1e-6, &why));
    pairs += 2;
    random_pairs += 2;
  }
  for (DType t : {kInt32, kInt64}) {
    Generator g1, g2;
    g1.manual_seed(99);
    g2.manual_seed(99);
    std::string why;
    CHECK(close(randint(-7, 9, {40000}, TensorOptions(dev).with(t), &g1), randint(-7, 9, {40000}, TensorOptions(t), &g2),
                0, &why));
    CHECK(close(randperm(50000, TensorOptions(dev).with(t), &g1), randperm(50000, TensorOptions(t), &g2), 0, &why));
    pairs += 2;
    random_pairs += 2;
  }
  std::printf("sweep on %s: %d (op, dtype) pairs checked: %d table pairs run (%d input variants compared), %d "
              "rejected with DTypeError as expected, %d random-stream pairs\n",
              dev.str().c_str(), pairs, pairs - rejected - random_pairs, compared, rejected, random_pairs);
  CHECK(pairs > 300);
}
