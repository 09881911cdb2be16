// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The first vnn program: report the devices found, pick the best one the
// PyTorch way ("cuda if available, else cpu" becomes best_device()), and run
// the same small computation on every device, checked against the CPU.
#include <vnn/vnn.h>

#include <chrono>
#include <cmath>
#include <iostream>

int main() {
  try {
    std::cout << "vnn " << VNN_VERSION_STRING << " found " << vnn::devices().size() << " device(s):\n";
    for (const auto& d : vnn::devices())
      std::cout << "  " << d.device << "  " << d.name << "  [" << vnn::name(d.type) << ", " << d.plugin << "]\n";
    for (const auto& r : vnn::backend_report())
      if (r.status != "ok") std::cout << "  (" << r.backend << " skipped: " << r.status << ")\n";

    vnn::Device device = vnn::best_device();
    std::cout << "best device: " << device << "\n\n";

    // y = tanh(x * w + b) on the CPU first, as the reference.
    const int64_t n = 1 << 20;
    vnn::Tensor x = vnn::arange(0, double(n), 1.0).view({1024, 1024}) * (1.0 / double(n));
    vnn::Tensor w = vnn::full({1024}, 3.0), b = vnn::full({1024, 1}, -1.0);
    vnn::Tensor reference = vnn::tanh(x * w + b);
    std::vector<float> want = reference.to_vector<float>();

    int ok = 0;
    for (const auto& d : vnn::devices()) {
      auto t0 = std::chrono::steady_clock::now();
      // Move the inputs once, compute where they live, bring the result back.
      vnn::Tensor xd = x.to(d.device), wd = w.to(d.device), bd = b.to(d.device);
      vnn::Tensor y = vnn::tanh(xd * wd + bd);
      std::vector<float> got = y.to_vector<float>();
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      double err = 0;
      for (size_t i = 0; i < got.size(); ++i) err = std::max(err, double(std::fabs(got[i] - want[i])));
      bool good = err < 1e-5;
      ok += good;
      std::cout << d.device << ": tanh(x*w+b) over " << n << " elements, max |diff| vs cpu = " << err << "  "
                << (good ? "OK" : "WRONG") << "  (" << ms << " ms incl. transfers)\n";
    }
    std::cout << "\nfirst row on " << device << ": " << reference.narrow(0, 0, 1).narrow(1, 0, 4).to(device) << "\n";
    if (ok != int(vnn::devices().size())) {
      std::cout << "some devices disagree with the CPU\n";
      return 1;
    }
    std::cout << "all " << ok << " device(s) agree with the CPU\n";
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "vnn error: " << e.what() << "\n";
    return 1;
  }
}
