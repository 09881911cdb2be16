// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The op tables' docs check, shared by unary_table.cpp and binary_table.cpp:
// docs/ops.md ("The op table") has a row "| `name` |" for every line.
#pragma once
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

namespace vnn::test {

template <class Lines>
void check_docs_rows(const char* ops_md, const Lines& lines) {
  std::ifstream f(ops_md);
  REQUIRE(f.good());
  std::stringstream text;
  text << f.rdbuf();
  const std::string doc = text.str();
  for (const auto& l : lines) {
    INFO(l.name);
    CHECK(doc.find(std::string("| `") + l.name + "` |") != std::string::npos);
  }
}

}  // namespace vnn::test
