// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Index bounds known on the host (src/tensor/tensor_impl.hpp, Storage::
// range_lo/hi): integer tensors that came from host memory, or were picked
// from such a tensor, answer the index checks of index_select, gather and
// nll_loss without a blocking read of the device. Checked here: which
// tensors carry bounds, that any write forgets them, that views keep them,
// and that out-of-range indices still raise the exact error on every device.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/nn/loss.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

// Bounds are recorded only where reading the values back would drain a
// device queue: on memory the host cannot read.
bool records(const Device& dev) { return !dev.is_cpu(); }

bool bounds(const Tensor& t, int64_t* lo, int64_t* hi) { return detail::known_range(t, lo, hi); }

}  // namespace

TEST_CASE("index bounds: host data copied to a device carries its bounds; writes forget them; views keep them") {
  Device dev = device_under_test();
  INFO("on " << dev);
  const std::vector<int64_t> v = {3, 0, 7, 2, 5};
  int64_t lo = -1, hi = -1;

  Tensor a = from_vector(v, {5}, dev);  // from_blob
  CHECK(bounds(a, &lo, &hi) == records(dev));
  if (records(dev)) CHECK((lo == 0 && hi == 7));

  Tensor b = from_vector(v, {5}).to(dev);  // Tensor::to from the host
  CHECK(bounds(b, &lo, &hi) == records(dev));
  if (records(dev)) CHECK((lo == 0 && hi == 7));

  // int32 on the host, int64 on the device: the same values.
  Tensor c = from_vector(std::vector<int32_t>{-4, 9}, {2}).to(dev, kInt64);
  CHECK(bounds(c, &lo, &hi) == records(dev));
  if (records(dev)) CHECK((lo == -4 && hi == 9));

  // A view lies within its storage's bounds.
  CHECK(bounds(b.narrow(0, 1, 2), &lo, &hi) == records(dev));
  CHECK(bounds(b.reshape({5, 1}), &lo, &hi) == records(dev));

  // Floating tensors carry none.
  CHECK_FALSE(bounds(from_vector(std::vector<float>{1, 2}, {2}).to(dev), &lo, &hi));

  // Every kind of write forgets them.
  Tensor w1 = from_vector(v, {5}, dev);
  w1.add_(100.0);
  CHECK_FALSE(bounds(w1, &lo, &hi));
  Tensor w2 = from_vector(v, {5}, dev);
  w2.fill_(42.0);
  CHECK_FALSE(bounds(w2, &lo, &hi));
  Tensor w3 = from_vector(v, {5}, dev);
  w3.narrow(0, 0, 1).copy_(from_vector(std::vector<int64_t>{99}, {1}));
  CHECK_FALSE(bounds(w3, &lo, &hi));  // a write through a view forgets the whole storage's bounds
  Tensor w4 = from_vector(v, {5}, dev);
  w4.masked_fill_(from_vector(std::vector<bool>{true, false, false, false, false}, {5}, dev), -1.0);
  CHECK_FALSE(bounds(w4, &lo, &hi));

  // Device-computed values carry none.
  CHECK_FALSE(bounds(add(a, a), &lo, &hi));
}

TEST_CASE("index bounds: index_select and gather pass the source's bounds on; a forgotten write still checks") {
  Device dev = device_under_test();
  INFO("on " << dev);
  const std::vector<int64_t> labels = {4, 1, 9, 0, 3, 3, 8};
  Tensor y = from_vector(labels, {7}, dev);
  Tensor order = from_vector(std::vector<int64_t>{6, 2, 0, 5}, {4}, dev);
  Tensor picked = index_select(y, 0, order);
  CHECK(picked.to_vector<int64_t>() == std::vector<int64_t>{8, 9, 4, 3});
  int64_t lo = -1, hi = -1;
  CHECK(bounds(picked, &lo, &hi) == records(dev));
  if (records(dev)) CHECK((lo == 0 && hi == 9));  // the source's bounds, not the picked ones
  Tensor g = gather(y, 0, order);
  CHECK(g.to_vector<int64_t>() == std::vector<int64_t>{8, 9, 4, 3});
  CHECK(bounds(g, &lo, &hi) == records(dev));

  // Out-of-range indices with known bounds: the exact value is reported.
  Tensor x = from_vector(std::vector<float>{0, 1, 2, 3}, {4}, dev);
  Tensor bad = from_vector(std::vector<int64_t>{1, 4}, {2}, dev);
  CHECK_THROWS_AS(index_select(x, 0, bad), IndexError);
  CHECK_THROWS_WITH(index_select(x, 0, bad), Catch::Contains("index 4 is out of bounds for dimension 0 with size 4"));
  CHECK_THROWS_WITH(gather(x, 0, bad), Catch::Contains("index 4 is out of bounds"));
  // Known bounds wider than the values (a view of a wider storage): the
  // check falls back to the values themselves and passes.
  Tensor wide = from_vector(std::vector<int64_t>{1, 2, 50}, {3}, dev);
  CHECK(max_abs_diff(index_select(x, 0, wide.narrow(0, 0, 2)), from_vector(std::vector<float>{1, 2}, {2}, dev)) == 0);

  // A write after the copy: the bounds are gone, so the check reads the
  // values again and finds the new culprit.
  Tensor idx = from_vector(std::vector<int64_t>{0, 1}, {2}, dev);
  idx.add_(3.0);  // now {3, 4}
  CHECK_THROWS_WITH(index_select(x, 0, idx), Catch::Contains("index 4 is out of bounds"));
}

TEST_CASE("index bounds: nll_loss and cross_entropy give the same loss with known bounds and still reject bad targets") {
  Device dev = device_under_test();
  INFO("on " << dev);
  std::vector<float> logits_v(4 * 5);
  for (size_t i = 0; i < logits_v.size(); ++i) logits_v[i] = float(int(i * 37 % 11) - 5) / 4.f;
  Tensor logits_cpu = from_vector(logits_v, {4, 5});
  const std::vector<int64_t> t = {4, 0, 2, 1};
  double want = nn::cross_entropy(logits_cpu, from_vector(t, {4})).item();
  Tensor logits = logits_cpu.to(dev);
  // Known bounds (from the host) and none (computed on the device).
  Tensor known = from_vector(t, {4}).to(dev);
  Tensor computed = add(known, zeros_like(known));
  int64_t lo, hi;
  CHECK_FALSE(bounds(computed, &lo, &hi));
  CHECK(nn::cross_entropy(logits, known).item() == Approx(want).epsilon(1e-5));
  CHECK(nn::cross_entropy(logits, computed).item() == Approx(want).epsilon(1e-5));
  // ignore_index inside the known bounds: the exact path counts the ignored targets.
  nn::CrossEntropyOptions ign;
  ign.ignore_index = 2;
  Tensor logp = log_softmax(logits, 1);
  double want_ign = nn::nll_loss(log_softmax(logits_cpu, 1), from_vector(t, {4}), ign).item();
  CHECK(nn::nll_loss(logp, known, ign).item() == Approx(want_ign).epsilon(1e-5));
  // A target out of range: known bounds fail, the exact values are reported.
  Tensor bad = from_vector(std::vector<int64_t>{4, 0, 5, 1}, {4}).to(dev);
  CHECK_THROWS_AS(nn::cross_entropy(logits, bad), IndexError);
  CHECK_THROWS_WITH(nn::cross_entropy(logits, bad), Catch::Contains("found values in [0, 5]"));
}
