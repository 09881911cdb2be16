// The one timing rule every bench program uses: warm up once, then the
// median over `samples` repetitions of the mean seconds per call of
// `iters` calls, each repetition ending with `sync` (work done, not queued).
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

}  // namespace vnn_bench
