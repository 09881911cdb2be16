// Views share storage and never copy; their errors name the shapes.
#include <catch2/catch.hpp>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

TEST_CASE("views share storage") {
  Device dev = device_under_test();
  Tensor x = zeros({2, 6}, dev);
  Tensor v = x.view({3, 4});
  CHECK(v.raw_data() == x.raw_data());
  v.narrow(0, 1, 1).fill_(5.0);  // row 1 of the 3x4 view = elements 4..7
  auto got = x.to_vector<float>();
  for (int i = 0; i < 12; ++i) REQUIRE(got[size_t(i)] == (i >= 4 && i < 8 ? 5.0f : 0.0f));
  CHECK(x.view({-1}).sizes() == Shape{12});
  CHECK(x.transpose(0, 1).is_contiguous() == false);
  CHECK(x.transpose(0, 1).reshape({12}).is_contiguous());
  CHECK(x.select(0, -1).sizes() == Shape{6});
  CHECK(x.expand({4, 2, 6}).stride(0) == 0);
  CHECK(x.flatten().sizes() == Shape{12});
}

TEST_CASE("view errors name shapes and dims") {
  Device dev = device_under_test();
  Tensor x = zeros({2, 6}, dev);
  CHECK_THROWS_AS(x.view({5, 5}), ShapeError);
  CHECK_THROWS_AS(x.view({-1, -1}), ShapeError);
  CHECK_THROWS_AS(x.transpose(0, 1).view({12}), ShapeError);
  CHECK_THROWS_AS(x.transpose(0, 2), IndexError);
  CHECK_THROWS_AS(x.narrow(1, 4, 3), IndexError);
  CHECK_THROWS_AS(x.select(0, 2), IndexError);
  CHECK_THROWS_AS(x.expand({3, 6}), ShapeError);
  CHECK_THROWS_AS(x.permute({0, 0}), ShapeError);
  try {
    (void)x.view({5, 5});
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("[5, 5]") != std::string::npos);
  }
  CHECK_THROWS_AS(Tensor().sizes(), ValueError);
  CHECK_THROWS_AS(x.item(), ValueError);
}

TEST_CASE("printing shows values, device and dtype") {
  Device dev = device_under_test();
  Tensor x = arange(0.0, 4, 1, dev).view({2, 2});
  std::string s = x.str();
  CHECK(s.find("tensor([[0.0000, 1.0000],") == 0);
  if (!dev.is_cpu()) CHECK(s.find("device='" + dev.str() + "'") != std::string::npos);
  CHECK(x.to(kInt32).str().find("dtype=int32") != std::string::npos);
  CHECK(full({}, 2.5, dev).str().find("tensor(2.5000") == 0);
  CHECK(full({}, 2.5, dev).item() == 2.5);
  CHECK(zeros({2000}, dev).str().find("...") != std::string::npos);
}
