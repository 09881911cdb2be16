// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SORT and SEARCHSORTED through the plugin C ABI (docs/ops.md): every plugin
// gives the same bits (a stable order, NaN last, -0.0 kept among the
// zeros, searches with PyTorch's comparisons), on short rows (merges) and a
// long one (radix on CPU devices), and refuses malformed requests instead
// of reading past them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "backends/abi_plugin.hpp"

using namespace abi_test;

namespace {

vnn_status run_multi(int kind, std::vector<vnn_tensor_desc> in, std::vector<vnn_tensor_desc> out,
                     std::vector<int64_t> ints) {
  vnn_op op{};
  op.struct_size = sizeof op;
  op.kind = kind;
  op.num_inputs = static_cast<int32_t>(in.size());
  op.num_outputs = static_cast<int32_t>(out.size());
  op.num_ints = static_cast<int32_t>(ints.size());
  op.inputs = in.data();
  op.outputs = out.data();
  op.ints = ints.data();
  return table()->run(kDevice, &op);
}

}  // namespace

TEST_CASE("SORT: stable rows, NaN last, -0.0 among the zeros, short rows and a long one", "[abi]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n : {int64_t(9), int64_t(70000)}) {
    const int64_t rows = n == 9 ? 3 : 1;
    std::vector<float> x(size_t(rows * n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int64_t(i * 7919 % 13) - 6);
    x[1] = nan, x[4] = -0.0f, x[x.size() - 1] = nan;
    for (bool descending : {false, true}) {
      INFO(plugin_name() << " rows " << rows << " x " << n << " descending " << descending);
      void* in = upload(x);
      void* vals = device_buffer(x.size() * 4);
      void* pos = device_buffer(x.size() * 8);
      REQUIRE(ok(run_multi(VNN_OP_SORT, {desc(in, VNN_FLOAT32, {rows, n})},
                           {desc(vals, VNN_FLOAT32, {rows, n}), desc(pos, VNN_INT64, {rows, n})}, {descending})));
      std::vector<float> v = download<float>(vals, x.size());
      std::vector<int64_t> p = download<int64_t>(pos, x.size());
      int64_t bad = 0;
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<int64_t> want(static_cast<size_t>(n));
        std::iota(want.begin(), want.end(), int64_t(0));
        const float* row = x.data() + r * n;
        std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
          const bool an = std::isnan(row[a]), bn = std::isnan(row[b]);
          return descending ? (an && !bn) || (!an && !bn && row[a] > row[b])
                            : (!an && bn) || (!an && !bn && row[a] < row[b]);
        });
        for (int64_t j = 0; j < n; ++j) {
          const size_t i = size_t(r * n + j);
          const float got = v[i], ref = row[want[size_t(j)]];
          bad += p[i] != want[size_t(j)] || std::signbit(got) != std::signbit(ref) ||
                 !(got == ref || (std::isnan(got) && std::isnan(ref)));
        }
      }
      CHECK(bad == 0);
      release({in, vals, pos});
    }
  }
}

TEST_CASE("SEARCHSORTED: left and right, shared and per-row sequences, int32 out", "[abi]") {
  void* seq = upload(std::vector<int64_t>{1, 3, 3, 5, 10, 20, 30, 40});
  void* v = upload(std::vector<int64_t>{3, 6, 30, 0});
  void* out = device_buffer(4 * 8);
  REQUIRE(ok(run_op(VNN_OP_SEARCHSORTED, {desc(seq, VNN_INT64, {2, 4}), desc(v, VNN_INT64, {2, 2})},
                    desc(out, VNN_INT64, {2, 2}), {}, {0})));
  CHECK(download<int64_t>(out, 4) == std::vector<int64_t>{1, 4, 2, 0});
  REQUIRE(ok(run_op(VNN_OP_SEARCHSORTED, {desc(seq, VNN_INT64, {2, 4}), desc(v, VNN_INT64, {2, 2})},
                    desc(out, VNN_INT64, {2, 2}), {}, {1})));
  CHECK(download<int64_t>(out, 4) == std::vector<int64_t>{3, 4, 3, 0});
  // One shared row of 4 for all 4 values, int32 positions.
  REQUIRE(ok(run_op(VNN_OP_SEARCHSORTED, {desc(seq, VNN_INT64, {1, 4}), desc(v, VNN_INT64, {1, 4})},
                    desc(out, VNN_INT32, {1, 4}), {}, {1})));
  CHECK(download<int32_t>(out, 4) == std::vector<int32_t>{3, 4, 4, 0});
  release({seq, v, out});
}

TEST_CASE("SORT and SEARCHSORTED refuse malformed requests", "[abi]") {
  void* a = device_buffer(64 * 8);
  void* b = device_buffer(64 * 8);
  void* c = device_buffer(64 * 8);
  // Strided rows, a wrong index dtype, a missing output, mismatched rows.
  CHECK(run_multi(VNN_OP_SORT, {desc(a, VNN_FLOAT32, {4, 4}, {8, 1})},
                  {desc(b, VNN_FLOAT32, {4, 4}), desc(c, VNN_INT64, {4, 4})}, {0}) != VNN_STATUS_OK);
  CHECK(run_multi(VNN_OP_SORT, {desc(a, VNN_FLOAT32, {4, 4})},
                  {desc(b, VNN_FLOAT32, {4, 4}), desc(c, VNN_INT32, {4, 4})}, {0}) != VNN_STATUS_OK);
  CHECK(run_multi(VNN_OP_SORT, {desc(a, VNN_FLOAT32, {4, 4})}, {desc(b, VNN_FLOAT32, {4, 4})}, {0}) !=
        VNN_STATUS_OK);
  CHECK(run_op(VNN_OP_SEARCHSORTED, {desc(a, VNN_FLOAT32, {3, 4}), desc(b, VNN_FLOAT32, {2, 4})},
               desc(c, VNN_INT64, {2, 4}), {}, {0}) != VNN_STATUS_OK);
  CHECK(run_op(VNN_OP_SEARCHSORTED, {desc(a, VNN_FLOAT32, {1, 4}), desc(b, VNN_FLOAT64, {1, 4})},
               desc(c, VNN_INT64, {1, 4}), {}, {0}) != VNN_STATUS_OK);
  release({a, b, c});
}
