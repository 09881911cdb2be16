// vnn <-> Python safetensors interop. Exits 77 (skipped) with the reason
// when python3 has neither safetensors nor torch.
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <iostream>
#include <string>

#include "vnn/vnn.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string script = argv[1];
  std::string dir = "/tmp/vnn_interop_" + std::to_string(::getpid());
  std::system(("mkdir -p " + dir).c_str());
  std::string mine = dir + "/from_vnn.safetensors", theirs = dir + "/from_python.safetensors";
  vnn::io::save(mine, {{"a", vnn::arange(0, 6, 1).view({2, 3})}, {"i", vnn::from_vector<int64_t>({-1, int64_t(1) << 40}, {2})}});
  int rc = std::system(("python3 " + script + " check " + mine).c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) return 77;
  if (rc != 0) { std::cerr << "python could not read the vnn file\n"; return 1; }
  rc = std::system(("python3 " + script + " write " + theirs).c_str());
  if (rc != 0) { std::cerr << "python failed to write\n"; return 1; }
  auto t = vnn::io::load(theirs);
  bool ok = t.at("x").to_vector<double>() == std::vector<double>{0, 1, 2, 3, 4, 5} && t.at("x").sizes() == vnn::Shape{3, 2} &&
            t.at("y").dtype() == vnn::kInt32 && t.at("y").to_vector<int32_t>() == std::vector<int32_t>{7, -8} &&
            vnn::io::load_metadata(theirs).at("from") == "python";
  std::system(("rm -rf " + dir).c_str());
  std::cout << (ok ? "interop ok\n" : "interop mismatch\n");
  return ok ? 0 : 1;
}
