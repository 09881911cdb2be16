// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch::data spellings of LibTorch's C++ API reference and frontend
// tutorial as vnn has them: a user's Dataset with get() and size(),
// batches of data and target, shuffling, workers, splits and a Normalize
// transform. vnn's loader is built from a DataLoaderOptions struct rather
// than make_data_loader(dataset.map(Stack<>()), DataLoaderOptions()
// .batch_size(64)) (docs/from-libtorch.md lists the differences); every
// result is checked.
#include <algorithm>
#include <memory>
#include <set>

#include "conformance.hpp"

namespace data = vnn::data;

// A custom dataset, as the reference's torch::data::datasets::Dataset<Self>:
// example i is data [i, i] with target i * i.
struct Squares : data::Dataset {
  int64_t size() const override { return 10; }
  data::Example get(int64_t index) const override {
    return {vnn::full({2}, double(index)), vnn::full({}, double(index * index), vnn::kLong)};
  }
};

int main() {
  return conformance::run("data", [](const vnn::Device& device) {
    auto squares = std::make_shared<Squares>();

    // ---- batches: data [B, 2], target [B]; the last batch is shorter ----------
    data::DataLoaderOptions options;
    options.batch_size = 4;
    data::DataLoader loader(squares, options);
    CHECK(loader.num_batches() == 3);
    std::vector<int64_t> sizes;
    int64_t seen = 0;
    for (auto& batch : loader) {
      sizes.push_back(batch.data.size(0));
      CHECK(batch.data.sizes() == vnn::Shape({batch.data.size(0), 2}));
      CHECK(batch.target.dtype() == vnn::kLong);
      CHECK(batch.data.select(1, 0).to(vnn::kLong).pow(2).equal(batch.target));
      seen += batch.target.numel();
    }
    CHECK(sizes == std::vector<int64_t>({4, 4, 2}) && seen == 10);

    // ---- drop_last, shuffle with a seed, workers, delivery on a device ---------
    data::DataLoaderOptions shuffled;
    shuffled.batch_size = 3;
    shuffled.shuffle = true;
    shuffled.seed = 5;
    shuffled.drop_last = true;
    shuffled.num_workers = 2;
    shuffled.device = device;
    data::DataLoader a(squares, shuffled);
    CHECK(a.num_batches() == 3);
    std::set<int64_t> indices;
    std::vector<double> first_pass;
    for (auto& batch : a) {
      CHECK(batch.data.device() == device && batch.target.device() == device);
      for (double v : batch.data.select(1, 0).to_vector<double>()) {
        indices.insert(int64_t(v));
        first_pass.push_back(v);
      }
    }
    CHECK(indices.size() == 9);
    shuffled.num_workers = 0;
    data::DataLoader b(squares, shuffled);
    std::vector<double> same_seed;
    for (auto& batch : b)
      for (double v : batch.data.select(1, 0).to_vector<double>()) same_seed.push_back(v);
    CHECK(same_seed == first_pass);  // the order depends on (seed, epoch) only
    std::vector<int64_t> order = b.order(0);
    CHECK(
        std::is_permutation(order.begin(), order.end(), std::vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).begin()));

    // ---- TensorDataset, random_split, Subset --------------------------------------
    vnn::Tensor xs = vnn::arange(0.0, 20.0, 1.0).view({10, 2});
    vnn::Tensor ys = vnn::arange(0, 10, 1);
    auto tensors = std::make_shared<data::TensorDataset>(xs, ys);
    CHECK(tensors->size() == 10);
    data::Example e = tensors->get(3);
    CHECK(e.data.equal(vnn::tensor({6, 7})) && e.target.item<int64_t>() == 3);
    vnn::Generator gen(0);
    auto parts = data::random_split(tensors, std::vector<int64_t>{7, 3}, gen);
    CHECK(parts.size() == 2 && parts[0]->size() == 7 && parts[1]->size() == 3);
    std::set<int64_t> all;
    for (auto& p : parts)
      for (int64_t i = 0; i < p->size(); ++i) all.insert(p->get(i).target.item<int64_t>());
    CHECK(all.size() == 10);

    // ---- transforms: Normalize(mean, std) per channel --------------------------------
    vnn::Tensor images = vnn::full({4, 1, 2, 2}, 1.0);
    auto raw = std::make_shared<data::TensorDataset>(images, vnn::zeros({4}, vnn::kLong));
    auto normalized = std::make_shared<data::TransformDataset>(
        raw, std::make_shared<data::Normalize>(std::vector<double>{0.5}, std::vector<double>{0.5}));
    CHECK(normalized->get(0).data.equal(vnn::ones({1, 2, 2})));  // (1 - 0.5) / 0.5
    data::DataLoaderOptions two;
    two.batch_size = 2;
    data::DataLoader normalized_loader(normalized, two);
    for (auto& batch : normalized_loader)
      CHECK(batch.data.sizes() == vnn::Shape({2, 1, 2, 2}) && batch.data.equal(vnn::ones({2, 1, 2, 2})));
  });
}
