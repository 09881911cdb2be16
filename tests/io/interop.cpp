// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn <-> Python interop: files vnn writes open in PyTorch (or Python's
// safetensors), files Python writes open in vnn, and weights trained in
// PyTorch load into a vnn module and give PyTorch's outputs. Exits 77
// (skipped) with the reason when no python3 has torch or safetensors.
// VNN_PYTHON picks the interpreter; otherwise python3 on PATH, then
// /usr/bin/python3 (where Debian's python3-torch lives).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "vnn/vnn.h"

namespace {
int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string script = argv[1];
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("VNN_PYTHON")) candidates.push_back(p);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  std::string py;
  for (auto& c : candidates)
    if (run(c + " " + script + " probe") == 0) {
      py = c;
      break;
    }
  if (py.empty()) {
    std::cout << "SKIP: no python3 with torch or safetensors (tried VNN_PYTHON, python3, /usr/bin/python3)\n";
    return 77;
  }
  std::string dir = "/tmp/vnn_interop_" + std::to_string(::getpid());
  run("mkdir -p " + dir);
  std::string mine = dir + "/from_vnn.safetensors", theirs = dir + "/from_python.safetensors",
              model_file = dir + "/torch_model.safetensors";
  vnn::io::save(mine, {{"a", vnn::arange(0.0, 6, 1).view({2, 3})}, {"i", vnn::from_vector<int64_t>({-1, int64_t(1) << 40}, {2})}});
  if (run(py + " " + script + " check " + mine) != 0) {
    std::cerr << "python could not read the vnn file\n";
    return 1;
  }
  if (run(py + " " + script + " write " + theirs) != 0) {
    std::cerr << "python failed to write\n";
    return 1;
  }
  auto t = vnn::io::load(theirs);
  bool ok = t.at("x").to_vector<double>() == std::vector<double>{0, 1, 2, 3, 4, 5} && t.at("x").sizes() == vnn::Shape{3, 2} &&
            t.at("y").dtype() == vnn::kInt32 && t.at("y").to_vector<int32_t>() == std::vector<int32_t>{7, -8} &&
            vnn::io::load_metadata(theirs).at("from") == "python";
  std::cout << (ok ? "files: interop ok\n" : "files: interop mismatch\n");
  int rc = run(py + " " + script + " module " + model_file);
  if (rc == 0) {
    auto w = vnn::io::load(model_file);
    auto net = vnn::nn::Sequential(std::initializer_list<vnn::nn::ModulePtr>{
        vnn::nn::Linear(4, 8), vnn::nn::ReLU(), vnn::nn::Linear(8, 3)});
    vnn::nn::StateDict sd;
    for (auto& [k, v] : w)
      if (k.rfind("probe_", 0) != 0) sd.emplace_back(k, v);
    net->load_state_dict(sd);
    vnn::Tensor out = net->forward(w.at("probe_input"));
    auto got = out.to_vector<float>(), want = w.at("probe_output").to_vector<float>();
    double err = 0;
    for (size_t i = 0; i < got.size(); ++i) err = std::max(err, double(std::abs(got[i] - want[i])));
    bool model_ok = got.size() == want.size() && err < 1e-5;
    std::cout << "pytorch-trained weights in a vnn module: max |diff| = " << err << (model_ok ? " ok\n" : " MISMATCH\n");
    ok = ok && model_ok;
  } else if (rc == 77) {
    std::cout << "module check skipped: " << py << " has no torch\n";
  } else {
    ok = false;
  }
  run("rm -rf " + dir);
  return ok ? 0 : 1;
}
