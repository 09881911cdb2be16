// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program outside the vnn tree: links vnn::vnn, finds the plugins at run
// time, computes on every device and checks the answer.
#include <vnn/vnn.h>

#include <iostream>

int main() {
  try {
    // The headers this was compiled with and the libvnn.so it runs with.
    if (!vnn::runtime_matches_headers()) {
      std::cerr << "headers " << VNN_VERSION_STRING << " but libvnn " << vnn::version() << "\n";
      return 1;
    }
    int checked = 0;
    for (const auto& d : vnn::devices()) {
      vnn::Tensor a = vnn::arange(0, 4, 1, d.device);
      vnn::Tensor b = vnn::full({4}, 2.0, d.device);
      std::vector<float> got = (a * b + 1.0).to_vector<float>();
      std::vector<float> want = {1, 3, 5, 7};
      if (got != want) {
        std::cerr << "wrong result on " << d.device << "\n";
        return 1;
      }
      std::cout << d.device << " ok (" << d.name << ")\n";
      ++checked;
    }
    std::cout << "vnn " << VNN_VERSION_STRING << ": " << checked << " device(s) checked\n";
    return checked > 0 ? 0 : 1;
  } catch (const vnn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
