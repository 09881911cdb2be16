// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DistributedSampler: PyTorch's partitions for the same arguments (a fixture
// written by torch.utils.data.DistributedSampler, see
// distributed_sampler_torch.py), the partition rules, and its use by the
// DataLoader.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "vnn/vnn.h"
#include "vnn/data/sampler.h"

using namespace vnn;
using vnn::data::DistributedSampler;
using vnn::data::DistributedSamplerOptions;

namespace {

uint64_t fnv(const std::vector<int64_t>& v) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t x : v) h = (h ^ uint64_t(x)) * 1099511628211ull;
  return h;
}

std::string fixture_path() {
  const char* p = std::getenv("VNN_SAMPLER_FIXTURE");
  return p && *p ? p : VNN_SAMPLER_FIXTURE_DEFAULT;
}

std::vector<int64_t> all_batches(vnn::data::DataLoader& loader) {
  std::vector<int64_t> seen;
  for (auto& b : loader)
    for (int64_t v : b.data.to_vector<int64_t>()) seen.push_back(v);
  return seen;
}

std::shared_ptr<vnn::data::TensorDataset> numbered(int64_t n) {
  return std::make_shared<vnn::data::TensorDataset>(arange(0, double(n), 1, TensorOptions(kInt64)));
}

// f() throws E whose message contains `text`.
template <class E, class F>
void check_throws(F f, const std::string& text) {
  try {
    f();
    FAIL("nothing was thrown; expected: " << text);
  } catch (const E& e) {
    CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains(text));
  }
}

}  // namespace

TEST_CASE("DistributedSampler gives torch's partitions for the same arguments", "[sampler][fixture]") {
  std::ifstream in(fixture_path());
  INFO("fixture " << fixture_path());
  REQUIRE(in.good());
  int lines = 0, listed = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    std::istringstream s(line);
    int64_t n, replicas, rank, epoch, count;
    int shuffle, drop_last;
    uint64_t seed, hash;
    std::string colon;
    REQUIRE(bool(s >> n >> replicas >> rank >> shuffle >> seed >> drop_last >> epoch >> colon >> count >> hash));
    std::vector<int64_t> expected;
    for (int64_t v; s >> v;) expected.push_back(v);
    DistributedSampler sampler(n, DistributedSamplerOptions{}
                                      .replicas(replicas, rank)
                                      .with_shuffle(shuffle != 0)
                                      .with_seed(seed)
                                      .with_drop_last(drop_last != 0));
    sampler.set_epoch(epoch);
    auto got = sampler.indices();
    INFO(line.substr(0, 60));
    CHECK(sampler.size() == count);
    REQUIRE(int64_t(got.size()) == count);
    CHECK(fnv(got) == hash);
    if (!expected.empty()) {
      CHECK(got == expected);
      ++listed;
    }
    ++lines;
  }
  CHECK(lines >= 100);  // the whole fixture was read
  CHECK(listed >= 80);
}

TEST_CASE("DistributedSampler: the ranks split the data, padded or dropped", "[sampler]") {
  for (bool shuffle : {false, true})
    for (bool drop_last : {false, true})
      for (int64_t n : {0, 1, 7, 8, 9, 100}) {
        const int64_t w = 4;
        std::multiset<int64_t> seen;
        for (int64_t r = 0; r < w; ++r) {
          DistributedSampler s(
              n, DistributedSamplerOptions{}.replicas(w, r).with_shuffle(shuffle).with_drop_last(drop_last));
          auto idx = s.indices(3);
          CHECK(int64_t(idx.size()) == (drop_last ? n / w : (n + w - 1) / w));
          seen.insert(idx.begin(), idx.end());
        }
        INFO("n " << n << " shuffle " << shuffle << " drop_last " << drop_last);
        std::set<int64_t> distinct(seen.begin(), seen.end());
        if (drop_last) {
          CHECK(distinct.size() == seen.size());  // no example twice
          CHECK(int64_t(seen.size()) == n / w * w);
        } else {
          CHECK(int64_t(distinct.size()) == n);  // every example, a few twice
          CHECK(int64_t(seen.size()) == (n + w - 1) / w * w);
        }
        for (int64_t i : distinct) CHECK((i >= 0 && i < n));
      }
  SECTION("no shuffle: rank r takes r, r + w, ...") {
    DistributedSampler s(10, DistributedSamplerOptions{}.replicas(4, 1).with_shuffle(false));
    CHECK(s.indices(0) == std::vector<int64_t>{1, 5, 9});
    DistributedSampler last(10, DistributedSamplerOptions{}.replicas(4, 3).with_shuffle(false));
    CHECK(last.indices(0) == std::vector<int64_t>{3, 7, 1});  // padded from the start
  }
}

TEST_CASE("DistributedSampler: epochs reshuffle, the same seed gives the same order on every rank", "[sampler]") {
  DistributedSampler a(50, DistributedSamplerOptions{}.replicas(2, 0).with_seed(9));
  DistributedSampler b(50, DistributedSamplerOptions{}.replicas(2, 0).with_seed(9));
  CHECK(a.indices(0) == b.indices(0));
  CHECK(a.indices(0) != a.indices(1));
  DistributedSampler other_seed(50, DistributedSamplerOptions{}.replicas(2, 0).with_seed(10));
  CHECK(other_seed.indices(0) != a.indices(0));
  // seed + epoch seeds the generator, as in PyTorch.
  CHECK(other_seed.indices(0) == a.indices(1));
  a.set_epoch(4);
  CHECK(a.indices() == b.indices(4));
  CHECK(a.indices(0) == b.indices(4));  // set_epoch wins over the loader's epoch
}

TEST_CASE("DataLoader follows a DistributedSampler", "[sampler]") {
  auto ds = numbered(23);
  auto sampler =
      std::make_shared<DistributedSampler>(ds->size(), DistributedSamplerOptions{}.replicas(3, 2).with_seed(5));
  vnn::data::DataLoaderOptions o;
  o.batch_size = 4;
  o.sampler = sampler;
  SECTION("one pass per epoch, the loader's epoch when set_epoch is not called") {
    vnn::data::DataLoader loader(ds, o);
    CHECK(loader.num_batches() == 2);  // 8 samples per rank
    CHECK(all_batches(loader) == sampler->indices(0));
    CHECK(all_batches(loader) == sampler->indices(1));
    loader.set_epoch(7);
    CHECK(all_batches(loader) == sampler->indices(7));
  }
  SECTION("PyTorch's way: set_epoch before each pass; workers do not change it") {
    o.num_workers = 2;
    vnn::data::DataLoader loader(ds, o);
    for (int64_t epoch : {3, 3, 0}) {
      sampler->set_epoch(epoch);
      CHECK(all_batches(loader) == DistributedSampler(23, sampler->options()).indices(epoch));
    }
  }
  SECTION("drop_last on the loader drops this rank's last partial batch") {
    o.drop_last = true;
    o.batch_size = 3;
    vnn::data::DataLoader loader(ds, o);
    auto want = sampler->indices(0);
    want.resize(6);
    CHECK(all_batches(loader) == want);
  }
}

TEST_CASE("DistributedSampler and DataLoader refuse bad arguments", "[sampler]") {
  check_throws<ValueError>([&] { (void)DistributedSampler(10, DistributedSamplerOptions{}.replicas(2, 2)); },
                           "invalid rank 2, rank should be in the interval [0, 1]");
  check_throws<ValueError>([&] { (void)DistributedSampler(10, DistributedSamplerOptions{}.replicas(2, -1)); },
                           "invalid rank -1");
  check_throws<ValueError>([&] { (void)DistributedSampler(10, DistributedSamplerOptions{}.replicas(0, 0)); },
                           "num_replicas must be >= 1");
  check_throws<ValueError>([&] { (void)DistributedSampler(-1, DistributedSamplerOptions{}); },
                           "dataset_size must be >= 0");
  auto ds = numbered(10);
  vnn::data::DataLoaderOptions o;
  o.sampler = std::make_shared<DistributedSampler>(10, DistributedSamplerOptions{});
  o.shuffle = true;
  check_throws<ValueError>([&] { (void)vnn::data::DataLoader(ds, o); },
                           "sampler and shuffle = true exclude each other");
  o.shuffle = false;
  o.sampler = std::make_shared<DistributedSampler>(50, DistributedSamplerOptions{}.with_shuffle(false));
  vnn::data::DataLoader loader(ds, o);
  check_throws<IndexError>([&] { (void)loader.begin(); }, "the sampler gave index 10 for a dataset of 10 examples");
}
