// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <catch2/catch.hpp>

#include "vnn/vnn.h"

using namespace vnn;

TEST_CASE("dtype sizes and names") {
  CHECK(itemsize(kFloat32) == 4);
  CHECK(itemsize(kFloat64) == 8);
  CHECK(itemsize(kFloat16) == 2);
  CHECK(itemsize(kBool) == 1);
  CHECK(itemsize(kInt8) == 1);
  CHECK(itemsize(kInt16) == 2);
  CHECK(is_integral(kChar));
  CHECK(is_integral(kShort));
  CHECK(std::string(name(kInt8)) == "int8");
  CHECK(dtype_from_name("int16") == kInt16);
  CHECK(std::string(name(kBFloat16)) == "bfloat16");
  CHECK(dtype_from_name("double") == kFloat64);
  CHECK_THROWS_AS(dtype_from_name("complex"), ValueError);
}

TEST_CASE("type promotion follows category then width") {
  CHECK(promote_types(kInt32, kFloat32) == kFloat32);
  CHECK(promote_types(kInt64, kFloat16) == kFloat16);
  CHECK(promote_types(kFloat16, kBFloat16) == kFloat32);
  CHECK(promote_types(kBool, kUInt8) == kUInt8);
  CHECK(promote_types(kUInt8, kInt32) == kInt32);
  CHECK(promote_types(kInt32, kInt64) == kInt64);
  CHECK(promote_types(kFloat32, kFloat64) == kFloat64);
  CHECK(promote_types(kBool, kBool) == kBool);
  // int8 / int16 (PyTorch's table): uint8 with int8 needs int16.
  CHECK(promote_types(kInt8, kUInt8) == kInt16);
  CHECK(promote_types(kUInt8, kInt8) == kInt16);
  CHECK(promote_types(kInt8, kInt16) == kInt16);
  CHECK(promote_types(kUInt8, kInt16) == kInt16);
  CHECK(promote_types(kInt16, kInt32) == kInt32);
  CHECK(promote_types(kInt8, kInt64) == kInt64);
  CHECK(promote_types(kBool, kInt8) == kInt8);
  CHECK(promote_types(kInt16, kFloat16) == kFloat16);
  CHECK(promote_types(kInt8, kInt8) == kInt8);
}

TEST_CASE("shape basics") {
  Shape s{2, 3, 4};
  CHECK(s.numel() == 24);
  CHECK(s.str() == "[2, 3, 4]");
  CHECK(Shape{}.numel() == 1);
  Shape big;
  for (int i = 0; i < kMaxDims; ++i) big.push_back(1);
  CHECK_THROWS_AS(big.push_back(1), ShapeError);
}

TEST_CASE("broadcast shapes name both shapes on mismatch") {
  CHECK(broadcast_shapes({2, 1, 3}, {4, 1}) == Shape{2, 4, 3});
  CHECK(broadcast_shapes({}, {5}) == Shape{5});
  try {
    broadcast_shapes({2, 3}, {4}, "add");
    FAIL("no throw");
  } catch (const ShapeError& e) {
    std::string m = e.what();
    CHECK(m.find("add") != std::string::npos);
    CHECK(m.find("[2, 3]") != std::string::npos);
    CHECK(m.find("[4]") != std::string::npos);
  }
}
