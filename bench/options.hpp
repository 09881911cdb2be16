// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `--name value` command-line options of the bench programs: each names the
// int or int64_t it sets; an unknown name is a ValueError (the program's
// main prints it after its own name).
#pragma once
#include <vnn/error.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>

namespace vnn_bench {

using Option = std::variant<int*, int64_t*>;

inline void parse_options(int argc, char** argv, const std::map<std::string, Option>& opts) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    auto it = opts.find(a);
    if (it == opts.end()) {
      std::string known;
      for (auto& [name, target] : opts) known += " " + name;
      throw vnn::ValueError("unknown option " + a + "; the options are" + known);
    }
    if (int* const* p = std::get_if<int*>(&it->second)) **p = std::stoi(v);
    else **std::get_if<int64_t*>(&it->second) = std::stoll(v);
  }
}

}  // namespace vnn_bench
