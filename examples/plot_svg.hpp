// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Metrics of a training run: CSV in and out, and an SVG chart of the loss
// and accuracy curves (no image library needed; opens in any browser).
#pragma once
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct EpochPoint {
  int epoch;
  double loss, accuracy, seconds;
};

inline void write_metrics(const std::string& path, const std::vector<EpochPoint>& h) {
  std::ofstream f(path);
  f << "epoch,train_loss,test_accuracy,seconds\n";
  for (auto& p : h) f << p.epoch << "," << p.loss << "," << p.accuracy << "," << p.seconds << "\n";
}

inline std::vector<EpochPoint> read_metrics(const std::string& path) {
  std::vector<EpochPoint> h;
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    EpochPoint p{};
    if (std::sscanf(line.c_str(), "%d,%lf,%lf,%lf", &p.epoch, &p.loss, &p.accuracy, &p.seconds) == 4) h.push_back(p);
  }
  return h;
}

// Two panels side by side: training loss and test accuracy per epoch.
inline void write_svg(const std::string& path, const std::vector<EpochPoint>& h) {
  const int W = 360, H = 240, pad = 40;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << 2 * W << "' height='" << H
      << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  auto panel = [&](int x0, const char* title, auto value, const char* color) {
    double lo = 1e300, hi = -1e300;
    for (auto& p : h) lo = std::min(lo, value(p)), hi = std::max(hi, value(p));
    if (h.empty()) lo = 0, hi = 1;
    if (hi - lo < 1e-9) lo -= 0.5, hi += 0.5;
    int n = std::max<int>(int(h.size()) - 1, 1);
    svg << "<text x='" << x0 + W / 2 << "' y='16' text-anchor='middle'>" << title << "</text>\n";
    svg << "<rect x='" << x0 + pad << "' y='" << pad / 2 + 10 << "' width='" << W - 2 * pad << "' height='"
        << H - 2 * pad << "' fill='none' stroke='#888'/>\n";
    svg << "<text x='" << x0 + 4 << "' y='" << pad / 2 + 20 << "'>" << hi << "</text><text x='" << x0 + 4 << "' y='"
        << H - pad + 10 << "'>" << lo << "</text>\n<polyline fill='none' stroke='" << color
        << "' stroke-width='2' points='";
    for (size_t i = 0; i < h.size(); ++i) {
      double x = x0 + pad + double(W - 2 * pad) * double(i) / n;
      double y = pad / 2 + 10 + double(H - 2 * pad) * (hi - value(h[i])) / (hi - lo);
      svg << x << "," << y << " ";
    }
    svg << "'/>\n<text x='" << x0 + W / 2 << "' y='" << H - 8 << "' text-anchor='middle'>epoch</text>\n";
  };
  panel(0, "training loss", [](const EpochPoint& p) { return p.loss; }, "#d62728");
  panel(W, "test accuracy", [](const EpochPoint& p) { return p.accuracy; }, "#1f77b4");
  svg << "</svg>\n";
  std::ofstream(path) << svg.str();
}
