// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn/detail/message.h: the exact texts str_cat builds for each kind of
// argument, and VNN_CHECK / VNN_THROW's typed exceptions, evaluation count
// and lazy message.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "vnn/detail/message.h"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::detail::str_cat;

TEST_CASE("str_cat formats core types as their operator<< does") {
  CHECK(str_cat("conv2d: weight ", Shape{8, 3, 3, 3}, " expects ", kFloat32) ==
        "conv2d: weight [8, 3, 3, 3] expects float32");
  CHECK(str_cat(Shape{}) == "[]");
  CHECK(str_cat(kBFloat16, " ", kUInt8, " ", kBool) == "bfloat16 uint8 bool");
  CHECK(str_cat("on ", Device("cpu", 0), " and ", Device("opencl", 1)) == "on cpu:0 and opencl:1");
}

TEST_CASE("str_cat formats numbers, characters and strings") {
  CHECK(str_cat("n=", int64_t(-9007199254740993LL), " u=", uint64_t(18446744073709551615ULL)) ==
        "n=-9007199254740993 u=18446744073709551615");
  CHECK(str_cat(int8_t(-5), " ", uint8_t(200), " ", 'x') == "-5 200 x");  // int8/uint8 are numbers, char a char
  CHECK(str_cat(true, "/", false) == "true/false");
  CHECK(str_cat(0.5, " ", 1e-3, " ", 2.0f) == "0.5 0.001 2");
  CHECK(str_cat(std::string("a"), std::string_view("b"), "c") == "abc");
  const char* none = nullptr;
  CHECK(str_cat("name ", none) == "name (null)");
  CHECK(str_cat(none) == "(null)");
  CHECK(str_cat() == "");
}

TEST_CASE("str_cat formats what a plugin holds: dtype codes, lists, descriptors") {
  using namespace vnn::detail;
  CHECK(str_cat(abi_dtype(VNN_FLOAT32), ", ", abi_dtype(VNN_FLOAT16), ", ", abi_dtype(VNN_BFLOAT16)) ==
        "float32, float16, bfloat16");
  CHECK(str_cat(abi_dtype(42)) == "dtype 42");
  CHECK(str_cat(abi_dtype(-1)) == "dtype -1");
  std::vector<int64_t> v{4, -1, 7};
  CHECK(str_cat(int_list(v)) == "[4, -1, 7]");
  CHECK(str_cat(v) == "[4, -1, 7]");
  CHECK(str_cat(int_list(v.data(), 0)) == "[]");
  vnn_tensor_desc d;
  std::memset(&d, 0, sizeof d);
  d.ndim = 2;
  d.sizes[0] = 2, d.sizes[1] = 3;
  d.strides[0] = 3, d.strides[1] = 1;
  CHECK(str_cat(desc_sizes(d), " strides ", desc_strides(d)) == "[2, 3] strides [3, 1]");
  d.ndim = 0;
  CHECK(str_cat(desc_sizes(d)) == "[]");
  d.ndim = 1000;  // a hostile descriptor prints at most VNN_MAX_DIMS sizes
  CHECK(str_cat(desc_sizes(d)).size() < 200);
}

TEST_CASE("VNN_THROW throws the named type with the built text") {
  try {
    VNN_THROW(ShapeError, "matmul: ", Shape{2, 3}, " @ ", Shape{4, 5});
    FAIL("VNN_THROW did not throw");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()) == "matmul: [2, 3] @ [4, 5]");
  }
  auto pick = [](bool ok) -> int { return ok ? 1 : VNN_THROW(ValueError, "pick: not ok"); };
  CHECK(pick(true) == 1);
  CHECK_THROWS_AS(pick(false), ValueError);
  CHECK_THROWS_WITH(pick(false), "pick: not ok");
}

TEST_CASE("VNN_CHECK evaluates its condition once and builds the message only on failure") {
  int evaluated = 0, built = 0;
  auto cond = [&](bool v) {
    ++evaluated;
    return v;
  };
  auto text = [&] {
    ++built;
    return std::string("costly");
  };
  VNN_CHECK(ValueError, cond(true), "never built: ", text());
  CHECK(evaluated == 1);
  CHECK(built == 0);
  try {
    VNN_CHECK(IndexError, cond(false), "index ", 7, " out of range for ", Shape{3}, " (", text(), ")");
    FAIL("VNN_CHECK did not throw");
  } catch (const IndexError& e) {
    CHECK(std::string(e.what()) == "index 7 out of range for [3] (costly)");
  }
  CHECK(evaluated == 2);
  CHECK(built == 1);
  // A statement: it nests under if/else without braces.
  bool ok = true;
  if (ok)
    VNN_CHECK(ValueError, ok, "unused");
  else
    VNN_THROW(ValueError, "unreachable");
  CHECK_THROWS_AS([] { VNN_CHECK(DTypeError, 1 == 2, "dtype"); }(), DTypeError);
}
