// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one timing rule every bench program uses: warm up once, then the
// median over `samples` repetitions of the mean seconds per call of
// `iters` calls, each repetition ending with `sync` (work done, not queued).
// interleaved_median_seconds applies it to peers measured side by side.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace vnn_bench {

inline double median_seconds(int samples, int iters, const std::function<void()>& body,
                             const std::function<void()>& sync) {
  std::vector<double> t;
  body();
  sync();
  for (int s = 0; s < samples; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) body();
    sync();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The same rule for contenders timed against each other: their repetitions
// alternate (A B C, B C A, C A B, ...), so a machine that slows down or
// speeds up during the run (a neighbour's build) weighs on each alike
// instead of on whichever ran in that minute. Returns one median per
// contender, in order.
struct Contender {
  std::function<void()> body;
  std::function<void()> sync;
};

inline std::vector<double> interleaved_median_seconds(int samples, int iters, const std::vector<Contender>& cs) {
  const size_t n = cs.size();
  std::vector<std::vector<double>> t(n);
  for (const Contender& c : cs) {
    c.body();
    c.sync();
  }
  for (int s = 0; s < samples; ++s)
    for (size_t j = 0; j < n; ++j) {
      const size_t k = (j + size_t(s)) % n;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) cs[k].body();
      cs[k].sync();
      t[k].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters);
    }
  std::vector<double> med(n);
  for (size_t k = 0; k < n; ++k) {
    std::sort(t[k].begin(), t[k].end());
    med[k] = t[k][t[k].size() / 2];
  }
  return med;
}

}  // namespace vnn_bench
