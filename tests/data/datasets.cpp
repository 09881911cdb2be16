// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Datasets, transforms and the DataLoader (delivery onto the device under test).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "support/device_under_test.hpp"

using namespace vnn;
using namespace vnn::data;
using vnn::test::device_under_test;

namespace {
// x[i] = i repeated over a [2, 3] sample, y[i] = i.
std::shared_ptr<TensorDataset> counting(int64_t n) {
  Tensor x = arange(0, double(n), 1).view({n, 1, 1}).expand({n, 2, 3}).contiguous();
  return std::make_shared<TensorDataset>(x, arange(0, double(n), 1, TensorOptions(kInt64)));
}
std::vector<int64_t> ids(const Batch& b) { return b.target.cpu().to_vector<int64_t>(); }

// Throws in get() for one index; counts calls.
struct Faulty : Dataset {
  int64_t n, bad;
  mutable std::atomic<int64_t> calls{0};
  std::vector<Example> ex;  // built here: workers should only read host memory
  Faulty(int64_t n_, int64_t bad_) : n(n_), bad(bad_) {
    for (int64_t i = 0; i < n; ++i) ex.push_back({full({4}, double(i)), full({}, double(i), TensorOptions(kInt64))});
    synchronize(Device("cpu", 0));
  }
  int64_t size() const override { return n; }
  Example get(int64_t i) const override {
    ++calls;
    if (i == bad) throw ValueError("sample " + std::to_string(i) + " is broken");
    return ex[size_t(i)];
  }
};
}  // namespace

TEST_CASE("TensorDataset, Subset, ConcatDataset, random_split") {
  auto ds = counting(10);
  CHECK(ds->size() == 10);
  Example e = ds->get(3);
  CHECK(e.data.sizes() == Shape{2, 3});
  CHECK(e.data.to_vector<float>() == std::vector<float>(6, 3.0f));
  CHECK(e.target.item<int64_t>() == 3);
  CHECK_THROWS_AS(ds->get(10), IndexError);
  CHECK_THROWS_AS(ds->get(-1), IndexError);
  CHECK_THROWS_AS(TensorDataset(ones({3, 2}), ones({4})), ShapeError);

  auto sub = std::make_shared<Subset>(ds, std::vector<int64_t>{7, 2});
  CHECK(sub->get(0).target.item<int64_t>() == 7);
  CHECK_THROWS_AS(Subset(ds, {10}), IndexError);
  ConcatDataset cat({ds, sub});
  CHECK(cat.size() == 12);
  CHECK(cat.get(9).target.item<int64_t>() == 9);
  CHECK(cat.get(11).target.item<int64_t>() == 2);
  CHECK_THROWS_AS(cat.get(12), IndexError);

  Generator g1(5), g2(5);
  auto a = random_split(ds, std::vector<int64_t>{7, 3}, g1);
  auto b = random_split(ds, std::vector<int64_t>{7, 3}, g2);
  CHECK(a[0]->indices() == b[0]->indices());
  std::set<int64_t> all(a[0]->indices().begin(), a[0]->indices().end());
  all.insert(a[1]->indices().begin(), a[1]->indices().end());
  CHECK(all.size() == 10);
  auto f = random_split(ds, std::vector<double>{0.55, 0.45}, g1);
  CHECK(f[0]->size() + f[1]->size() == 10);
  CHECK(f[0]->size() == 6);
  CHECK_THROWS_AS(random_split(ds, std::vector<int64_t>{5, 4}, g1), ValueError);
}

TEST_CASE("transforms: Normalize exact, crop and flip deterministic per (epoch, index)") {
  Tensor img = arange(0.0, 2 * 4 * 4, 1).view({2, 4, 4});
  Normalize norm({1.0, 2.0}, {2.0, 4.0});
  auto v = norm.apply(img, {}).to_vector<float>();
  for (int i = 0; i < 32; ++i) CHECK(v[size_t(i)] == float((double(i) - (i < 16 ? 1.0 : 2.0)) / (i < 16 ? 2.0 : 4.0)));
  CHECK_THROWS_AS(Normalize({1, 2, 3}, {1, 1, 1}).apply(img, {}), ShapeError);
  CHECK_THROWS_AS(Normalize({1}, {0}), ValueError);

  RandomCrop crop(4, 2);
  int shifted = 0;
  for (int64_t idx = 0; idx < 20; ++idx) {
    RandomKey k{7, 1, idx, 0};
    Tensor c = crop.apply(img, k);
    CHECK(c.sizes() == Shape{2, 4, 4});
    CHECK(c.to_vector<float>() == crop.apply(img, k).to_vector<float>());  // same key, same crop
    if (c.to_vector<float>() != img.to_vector<float>()) ++shifted;
    // Every value is either padding (0) or the matching pixel of a shifted window.
    for (float x : c.to_vector<float>()) CHECK((x >= 0 && x < 32));
  }
  CHECK(shifted > 10);
  Tensor noncontig = arange(0.0, 32, 1).view({4, 4, 2}).permute({2, 0, 1});
  CHECK(RandomCrop(4, 0).apply(noncontig, {}).to_vector<float>() == noncontig.contiguous().to_vector<float>());
  CHECK_THROWS_AS(RandomCrop(9, 0).apply(img, {}), ShapeError);

  RandomHorizontalFlip always(1.0), never(0.0);
  auto fl = always.apply(img, {}).to_vector<float>();
  CHECK(fl[0] == 3.0f);
  CHECK(fl[3] == 0.0f);
  CHECK(never.apply(img, {}).to_vector<float>() == img.to_vector<float>());
  RandomHorizontalFlip half(0.5);
  int flips = 0;
  for (int64_t idx = 0; idx < 200; ++idx) flips += half.apply(img, {1, 0, idx, 0}).to_vector<float>()[0] == 3.0f;
  CHECK(flips > 70);
  CHECK(flips < 130);

  auto tds = std::make_shared<TransformDataset>(
      counting(8), std::make_shared<Compose>(std::vector<TransformPtr>{std::make_shared<RandomCrop>(3, 1),
                                                                       std::make_shared<RandomHorizontalFlip>()}),
      42);
  CHECK(tds->get_for_epoch(5, 2).data.sizes() == Shape{3, 3});  // a [2, 3] sample padded by 1, cropped to 3x3
  CHECK(tds->get_for_epoch(5, 2).data.to_vector<float>() == tds->get_for_epoch(5, 2).data.to_vector<float>());
}

TEST_CASE("DataLoader: batches, drop_last, order independent of workers, epochs differ") {
  auto ds = counting(23);
  for (bool drop : {false, true}) {
    DataLoaderOptions o;
    o.batch_size = 5;
    o.drop_last = drop;
    DataLoader dl(ds, o);
    CHECK(dl.num_batches() == (drop ? 4 : 5));
    std::vector<int64_t> seen;
    int64_t nb = 0;
    for (auto& b : dl) {
      ++nb;
      CHECK(b.data.sizes()[1] == 2);
      CHECK(b.data.dtype() == kFloat32);
      auto d = b.data.to_vector<float>();
      auto t = ids(b);
      for (size_t i = 0; i < t.size(); ++i) CHECK(d[i * 6] == float(t[i]));
      seen.insert(seen.end(), t.begin(), t.end());
    }
    CHECK(nb == dl.num_batches());
    CHECK(seen.size() == (drop ? 20u : 23u));
    CHECK(seen[0] == 0);
  }
  std::vector<std::vector<int64_t>> orders;
  for (int workers : {0, 1, 2, 3}) {
    DataLoaderOptions o;
    o.batch_size = 4;
    o.shuffle = true;
    o.seed = 99;
    o.num_workers = workers;
    DataLoader dl(ds, o);
    std::vector<int64_t> all;
    for (int epoch = 0; epoch < 2; ++epoch)
      for (auto& b : dl)
        for (auto i : ids(b)) all.push_back(i);
    orders.push_back(all);
  }
  for (auto& o : orders) CHECK(o == orders[0]);
  std::vector<int64_t> e0(orders[0].begin(), orders[0].begin() + 23), e1(orders[0].begin() + 23, orders[0].end());
  CHECK(e0 != e1);
  std::set<int64_t> uniq(e0.begin(), e0.end());
  CHECK(uniq.size() == 23);
  DataLoaderOptions bad;
  bad.batch_size = 0;
  CHECK_THROWS_AS(DataLoader(ds, bad), ValueError);
  bad.batch_size = 1;
  bad.device = Device("nosuch", 0);
  CHECK_THROWS_AS(DataLoader(ds, bad), DeviceNotFound);
}

TEST_CASE("DataLoader: break mid-epoch and destruction do not hang; worker errors surface") {
  auto ds = counting(5000);
  auto fut = std::async(std::launch::async, [&] {
    DataLoaderOptions o;
    o.batch_size = 8;
    o.num_workers = 3;
    o.prefetch_factor = 2;
    for (int rep = 0; rep < 5; ++rep) {
      DataLoader dl(ds, o);
      int n = 0;
      for (auto& b : dl) {
        (void)b;
        if (++n == 3) break;
      }
      auto it = dl.begin();  // destroyed with the loader mid-epoch
      ++it;
    }
    return true;
  });
  REQUIRE(fut.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(fut.get());

  auto faulty = std::make_shared<Faulty>(100, 37);
  for (int workers : {0, 2}) {
    DataLoaderOptions o;
    o.batch_size = 10;
    o.num_workers = workers;
    DataLoader dl(faulty, o);
    int delivered = 0;
    try {
      for (auto& b : dl) {
        (void)b;
        ++delivered;
      }
      FAIL("no exception");
    } catch (const ValueError& e) {
      CHECK(std::string(e.what()) == "sample 37 is broken");
    }
    CHECK(delivered == 3);  // batches 0..2 arrive, batch 3 holds the bad sample
  }
  // Bounded prefetch: with a slow consumer the workers stay at most
  // workers * prefetch_factor batches ahead.
  auto counted = std::make_shared<Faulty>(1000, -1);
  DataLoaderOptions o;
  o.batch_size = 10;
  o.num_workers = 2;
  o.prefetch_factor = 2;
  {
    DataLoader dl(counted, o);
    auto it = dl.begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(counted->calls.load() <= (1 + 2 * 2 + 1) * 10);
  }
}

TEST_CASE("DataLoader: pin_memory and device delivery with non_blocking copies") {
  Device dev = device_under_test();
  auto ds = counting(50);
  for (bool pin : {false, true})
    for (bool nb : {false, true})
      for (int workers : {0, 2}) {
        INFO("pin " << pin << " non_blocking " << nb << " workers " << workers);
        DataLoaderOptions o;
        o.batch_size = 8;
        o.pin_memory = pin;
        o.non_blocking = nb;
        o.num_workers = workers;
        o.device = dev;
        DataLoader dl(ds, o);
        int64_t next = 0;
        for (auto& b : dl) {
          CHECK(b.data.device() == dev);
          CHECK(b.target.device() == dev);
          auto t = ids(b);
          auto d = b.data.cpu().to_vector<float>();
          for (size_t i = 0; i < t.size(); ++i) {
            CHECK(t[i] == next++);
            CHECK(d[i * 6 + 5] == float(t[i]));
          }
        }
        CHECK(next == 50);
      }
  DataLoaderOptions o;
  o.batch_size = 4;
  o.pin_memory = true;
  DataLoader host(ds, o);
  auto it = host.begin();
  CHECK(it->data.device() == Device("cpu", 0));
  bool any_pinnable = false;
  for (auto& d : devices()) any_pinnable |= !d.host_accessible;
  CHECK(it->data.is_pinned() == any_pinnable);
}
