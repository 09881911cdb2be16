// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The registry of tests/moduledb/moddb.hpp, and the module_db entries vnn
// has no module for yet (each a named gap, so the runner lists it).
#include "moddb.hpp"

#include <cstdio>
#include <cstdlib>
#include <initializer_list>

namespace vnn::moddb {

nn::Reduction reduction(Call& c, size_t position) {
  return nn::reduction_from_string(c.str(position, "reduction", "mean"));
}

std::map<std::string, ModFn>& registry() {
  static std::map<std::string, ModFn> r;
  return r;
}
Registrar& Registrar::operator=(ModFn fn) {
  if (!registry().emplace(key, std::move(fn)).second) {
    std::fprintf(stderr, "module_db: entry %s mapped twice\n", key);
    std::abort();
  }
  return *this;
}

namespace {
// torch.nn modules vnn lacks today. A helper adding one deletes its line
// here and maps it in modules_*.cpp.
const bool missing_registered = [] {
  // clang-format off: one line each, so that removals do not conflict
  const std::initializer_list<const char*> missing = {
  };
  // clang-format on

  for (const char* key : missing) {
    const std::string why = std::string("vnn has no ") + (key + 3) + " module yet";
    Registrar{key} = [why](Call&) -> Built { gap(why); };
  }
  return true;
}();
}  // namespace

}  // namespace vnn::moddb
