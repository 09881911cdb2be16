// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C++ API a LibTorch user expects (issue 15), on the device under test:
// module holders, variadic Sequential, chained options, to() chaining,
// clone(), tensor operators and indexing views, creation defaults and the
// device helpers. Every spelling here is one the docs show.
#include <catch2/catch.hpp>

#include <sstream>

#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

// A user's own module with a holder, as TORCH_MODULE(Net).
struct NetImpl : nn::Cloneable<NetImpl> {
  explicit NetImpl(int64_t hidden = 8) : Cloneable("Net"), hidden(hidden) { reset(); }
  void reset() override {
    fc1 = register_module("fc1", nn::Linear(4, hidden));
    fc2 = register_module("fc2", nn::Linear(nn::LinearOptions(hidden, 3).bias(false)));
    scale = register_buffer("scale", full({3}, 2.0));
  }
  Tensor forward(const Tensor& x) { return mul(fc2(relu(fc1(x))), scale); }
  int64_t hidden;
  nn::Linear fc1{nullptr}, fc2{nullptr};
  Tensor scale;
};
VNN_MODULE(Net);

// A module deriving from Module directly: everything but clone().
struct Plain : nn::Module {
  Plain() : Module("Plain") { fc = register_module("fc", nn::Linear(2, 2)); }
  Tensor forward(const Tensor& x) { return fc(x); }
  nn::Linear fc{nullptr};
};

Tensor iota(const Shape& shape, const Device& dev) {
  return arange(0.0, double(shape.numel()), 1.0, TensorOptions(dev).with(kFloat64)).view(shape);
}

}  // namespace

TEST_CASE("module holders: construct, call, reach members, register") {
  Device dev = device_under_test();
  nn::Linear fc(4, 3);
  Tensor x = randn({2, 4}, dev);
  fc->to(dev);
  Tensor y = fc(x);
  CHECK(y.sizes() == Shape{2, 3});
  CHECK(fc->weight.sizes() == Shape{3, 4});
  CHECK(fc.ptr()->in_features == 4);
  CHECK(max_abs_diff(y, fc->forward(x)) == 0);
  nn::ModulePtr as_module = fc;  // a holder converts to ModulePtr and shares the module
  CHECK(as_module.get() == fc.get());

  Net net;
  CHECK(net->named_parameters().size() == 3);  // fc1.weight, fc1.bias, fc2.weight
  CHECK(net->named_parameters()[2].first == "fc2.weight");
  CHECK_FALSE(net->fc2->bias.defined());
  CHECK(net->named_buffers()[0].first == "scale");
  net->to(dev);
  CHECK(net(x).sizes() == Shape{2, 3});
  CHECK(net(x).device() == net->parameters()[0].device());  // the seed's assertion

  nn::Linear empty{nullptr};
  CHECK(empty.is_empty());
  CHECK_FALSE(bool(empty));
  CHECK_THROWS_AS(empty(x), ValueError);
  CHECK_THROWS_AS(empty->weight, ValueError);
}

TEST_CASE("Sequential: variadic, push_back, operator[], iteration, as<>") {
  Device dev = device_under_test();
  nn::Sequential seq(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).stride(1).padding(1).bias(false)), nn::ReLU(),
                     nn::MaxPool2d(2), nn::Flatten(), nn::Linear(4 * 2 * 2, 5));
  seq->push_back(nn::LogSoftmax(1));
  CHECK(seq->size() == 6);
  int n = 0;
  for (const auto& m : *seq) n += m ? 1 : 0;
  CHECK(n == 6);
  CHECK(seq[0]->as<nn::Conv2d>() != nullptr);
  CHECK(seq[0]->as<nn::Conv2d>()->options.padding().h == 1);
  CHECK_FALSE(seq[0]->as<nn::Conv2d>()->bias.defined());
  CHECK(seq[1]->as<nn::Linear>() == nullptr);
  CHECK(seq[4]->as<nn::LinearImpl>()->out_features == 5);
  CHECK_THROWS_AS(seq[6], IndexError);
  seq->to(dev).train(false);  // to() returns the module: calls chain
  CHECK_FALSE(seq->is_training());
  Tensor out = seq(randn({2, 1, 4, 4}, dev));
  CHECK(out.sizes() == Shape{2, 5});
  CHECK(out.device() == dev);
  // Braces: the initializer_list form (elements built left to right).
  nn::Sequential braced{nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 2)};
  CHECK(braced->named_parameters()[2].first == "2.weight");
  nn::Sequential unset{nullptr};  // an empty holder, not a list of one null module
  CHECK(unset.is_empty());
  nn::ModuleList unset_list{nullptr};
  CHECK(unset_list.is_empty());
  nn::ModuleList list(nn::Linear(2, 2), nn::GELU());
  CHECK(list->size() == 2);
  nn::ModuleDict dict;
  dict->insert("head", nn::Identity());
  CHECK(dict["head"]->as<nn::Identity>() != nullptr);
  CHECK_THROWS_AS(dict["tail"], ValueError);
}

TEST_CASE("options: required arguments in the constructor, the rest chained") {
  Device dev = device_under_test();
  nn::Conv2d conv(nn::Conv2dOptions(2, 6, {3, 2}).stride({1, 2}).padding({2, 1}).dilation({2, 1}).groups(2));
  conv->to(dev);
  Tensor x = randn({1, 2, 5, 6}, dev);
  Tensor ref = conv2d(x, conv->weight, conv->bias, Size2(1, 2), Size2(2, 1), Size2(2, 1), 2);
  CHECK(max_abs_diff(conv(x), ref) == 0);
  CHECK(conv->weight.sizes() == Shape{6, 1, 3, 2});

  Tensor img = randn({1, 2, 6, 6}, dev);
  CHECK(max_abs_diff(nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1))(img), max_pool2d(img, 3, 2, 1)) == 0);
  CHECK(max_abs_diff(nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(false))(img),
                     avg_pool2d(img, 3, 2, 1, false)) == 0);
  CHECK(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({3, 2}))(img).sizes() == Shape{1, 2, 3, 2});

  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(2).momentum(0.3).eps(1e-3).affine(false));
  CHECK(bn->parameters().empty());
  CHECK(bn->options.momentum() == 0.3);
  nn::BatchNorm1d bn1(nn::BatchNorm1dOptions(3).track_running_stats(false));
  CHECK(bn1->buffers().empty());
  nn::LayerNorm ln(nn::LayerNormOptions({4}).eps(1e-3).elementwise_affine(false));
  CHECK(ln->parameters().empty());
  nn::GroupNorm gn(nn::GroupNormOptions(2, 4).affine(false));
  CHECK(gn->parameters().empty());
  nn::Dropout drop(nn::DropoutOptions().p(0.25));
  CHECK(drop->options.p() == 0.25);
  nn::Embedding emb(nn::EmbeddingOptions(10, 3));
  CHECK(emb->weight.sizes() == Shape{10, 3});
  nn::LeakyReLU lrelu(nn::LeakyReLUOptions().negative_slope(0.2));
  CHECK(lrelu(tensor({-1.0}))[0].item<double>() == Approx(-0.2));
  nn::Flatten flat(nn::FlattenOptions().start_dim(0));
  CHECK(flat(zeros({2, 3})).sizes() == Shape{6});

  Tensor logits = randn({4, 3}, dev), target = randint(0, 3, {4}, dev);
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().label_smoothing(0.1).reduction(nn::kSum));
  nn::CrossEntropyOptions old;  // the aggregate form still works
  old.label_smoothing = 0.1;
  old.reduction = nn::Reduction::sum;
  CHECK(ce(logits, target).item<double>() == Approx(nn::cross_entropy(logits, target, old).item<double>()));
  CHECK(nn::MSELoss(nn::MSELossOptions().reduction(nn::kSum))(logits, zeros_like(logits)).item<double>() ==
        Approx(sum(mul(logits, logits)).item<double>()));
  CHECK(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(logits, logits).item<double>() == 0);
  CHECK(nn::L1Loss(nn::L1LossOptions(nn::kSum))(logits, zeros_like(logits)).item<double>() ==
        Approx(sum(abs(logits)).item<double>()));
  Tensor logp = log_softmax(logits, 1);
  nn::NLLLoss nll(nn::NLLLossOptions().ignore_index(1).reduction(nn::kNone));
  CHECK(nll(logp, target).sizes() == Shape{4});
  CHECK(max_abs_diff(nn::Softmax(nn::SoftmaxOptions(1))(logits), softmax(logits, 1)) == 0);
  Tensor prob = sigmoid(logits), half = full({4, 3}, 0.5, dev);
  CHECK(nn::BCELoss(nn::BCELossOptions().weight(ones({3}, dev)).reduction(nn::kMean))(prob, half).item<double>() ==
        Approx(nn::binary_cross_entropy(prob, half).item<double>()));
  CHECK(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(full({3}, 2.0, dev)))(logits, half)
            .item<double>() ==
        Approx(nn::binary_cross_entropy_with_logits(logits, half, Tensor(), full({3}, 2.0, dev)).item<double>()));
  auto ce_copy = std::dynamic_pointer_cast<nn::CrossEntropyLossImpl>(ce->clone());
  REQUIRE(ce_copy);
  CHECK(ce_copy->options.label_smoothing() == 0.1);

  CHECK_THROWS_AS(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)), ValueError);
  CHECK_THROWS_AS(nn::Linear(0, 3), ValueError);
  CHECK_THROWS_AS(nn::Dropout(1.5), ValueError);
}

TEST_CASE("clone: a deep copy onto a device") {
  Device dev = device_under_test();
  Net net(6);
  {
    autograd::NoGradGuard g;
    net->fc1->weight.fill_(0.5);
  }
  Tensor x = randn({3, 4});
  Tensor before = net(x);
  sum(before).backward();
  net->eval();
  uint64_t offset = default_generator().offset();
  auto copy = std::dynamic_pointer_cast<NetImpl>(net->clone(dev));
  CHECK(default_generator().offset() == offset);  // reset() inside clone leaves the user's stream alone
  REQUIRE(copy);
  CHECK(copy->hidden == 6);
  CHECK_FALSE(copy->is_training());
  CHECK_FALSE(copy->fc1->is_training());
  CHECK(copy->fc1->weight.device() == dev);
  CHECK(copy->scale.device() == dev);
  CHECK(copy->fc1->weight.requires_grad());
  CHECK(copy->fc1->weight.grad().defined());
  CHECK(max_abs_diff(copy->fc1->weight.grad(), net->fc1->weight.grad()) == 0);
  CHECK(max_abs_diff(Net(copy)(x.to(dev)), before) < 1e-6);
  // Nothing is shared: changing the copy leaves the original as it was.
  {
    autograd::NoGradGuard g;
    copy->fc1->weight.fill_(-1.0);
  }
  CHECK(net->fc1->weight.to_vector<float>()[0] == 0.5f);
  CHECK(copy->fc1->weight.impl() != net->fc1->weight.impl());
  CHECK(copy->named_parameters()[0].second.impl() == copy->fc1->weight.impl());  // members follow the copy

  nn::Sequential seq(nn::Linear(2, 3), nn::BatchNorm1d(3), nn::ReLU());
  auto seq_copy = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  REQUIRE(seq_copy);
  CHECK(seq_copy->size() == 3);
  CHECK(max_abs_diff((*seq_copy)[0]->as<nn::Linear>()->weight, seq[0]->as<nn::Linear>()->weight) == 0);
  CHECK((*seq_copy)[0]->as<nn::Linear>()->weight.impl() != seq[0]->as<nn::Linear>()->weight.impl());
  CHECK(seq_copy->named_buffers().size() == 3);

  try {
    net->clone(Device("cpu", 7));
    FAIL("no throw");
  } catch (const DeviceNotFound& e) {
    std::string msg = e.what();
    CHECK(msg.find("Net::clone") != std::string::npos);
    CHECK(msg.find("cpu:7") != std::string::npos);
    CHECK(msg.find("cpu:0") != std::string::npos);  // the devices there are
  }
  Plain plain;
  CHECK_THROWS_AS(plain.clone(), Unsupported);
}

TEST_CASE("compound assignment: values and autograd") {
  Device dev = device_under_test();
  Tensor a = full({3}, 2.0, dev), b = tensor({1.0, 2.0, 4.0}).to(dev);
  a += b;
  a -= 1.0;
  a *= b;
  a /= 2.0;
  a += 1;
  CHECK(a.to_vector<float>() == std::vector<float>{2.0f, 4.0f, 11.0f});
  Tensor m = zeros({2, 2}, dev);
  m[0] += 3.0;  // a view: writes through
  m[-1][1] -= 1.0;
  CHECK(m.to_vector<float>() == std::vector<float>{3, 3, 0, -1});
  Tensor i = arange(0, 4, 1, dev);
  CHECK_THROWS_AS(i /= 2.0, DTypeError);  // int64 self cannot hold the quotient, as PyTorch
  // Autograd: the in-place ops, gradchecked in float64.
  auto f = [](const std::vector<Tensor>& v) {
    Tensor y = mul(v[0], 1.0);  // a non-leaf to modify in place
    y += v[1];
    y *= v[1];
    y -= 0.5;
    y /= add(v[1], 3.0);
    return y;
  };
  Tensor x0 = randn({5}, TensorOptions(dev).with(kFloat64)).requires_grad_();
  Tensor x1 = randn({5}, TensorOptions(dev).with(kFloat64)).requires_grad_();
  auto r = autograd::gradcheck(f, {x0, x1});
  CHECK(r.ok);
  Tensor leaf = ones({2}, dev).requires_grad_();
  CHECK_THROWS(leaf += 1.0);  // an in-place op on a leaf that requires grad
}

TEST_CASE("indexing views: t[i], t[i][j], index({Slice, ...}), t(), mT()") {
  Device dev = device_under_test();
  Tensor x = iota({3, 4}, dev);
  CHECK(x[1].to_vector<double>() == std::vector<double>{4, 5, 6, 7});
  CHECK(x[-1][-2].item<double>() == 10);
  CHECK(x[2][3].item<int64_t>() == 11);
  CHECK(x[0].storage_offset() == x.storage_offset());
  using namespace vnn::indexing;
  CHECK(x.index({Slice(0, 2), 1}).to_vector<double>() == std::vector<double>{1, 5});
  CHECK(x.index({Slice(), Slice(1, None, 2)}).to_vector<double>() == std::vector<double>{1, 3, 5, 7, 9, 11});
  CHECK(x.index({Slice(-2)}).sizes() == Shape{2, 4});
  CHECK(x.index({Slice(None, -1), -1}).to_vector<double>() == std::vector<double>{3, 7});
  CHECK(x.index({Slice(5, 10)}).sizes() == Shape{0, 4});  // clamped, as Python
  CHECK(x.index({None, Slice(), 0}).sizes() == Shape{1, 3});
  CHECK(x.index({"...", 2}).to_vector<double>() == std::vector<double>{2, 6, 10});
  CHECK(x.index({Ellipsis, None}).sizes() == Shape{3, 4, 1});
  CHECK(x.index({1}).sizes() == Shape{4});
  Tensor y = zeros({3, 4}, dev);
  y.index_put_({Slice(), 0}, 7.0);
  y.index_put_({1, Slice(1, 3)}, tensor({1.0, 2.0}).to(dev));
  CHECK(y.to_vector<float>() == std::vector<float>{7, 0, 0, 0, 7, 1, 2, 0, 7, 0, 0, 0});
  CHECK(x.t().sizes() == Shape{4, 3});
  CHECK(x.t()[1][2].item<double>() == 9);
  CHECK(x.t().t().is_contiguous());
  CHECK(iota({4}, dev).t().sizes() == Shape{4});
  Tensor b = iota({2, 3, 4}, dev);
  CHECK(b.mT().sizes() == Shape{2, 4, 3});
  CHECK(b.mT()[1][3][2].item<double>() == b[1][2][3].item<double>());
  CHECK_THROWS_AS(b.t(), ShapeError);
  CHECK_THROWS_AS(iota({3}, dev).mT(), ShapeError);

  // Bad input: the error names the dim and its size.
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no throw");
  };
  CHECK_THROWS_AS(x[3], IndexError);
  CHECK_THROWS_AS(x[-4], IndexError);
  CHECK(message([&] { x[3]; }).find("dimension 0 of size 3") != std::string::npos);
  CHECK_THROWS_AS(x[0][4], IndexError);
  CHECK_THROWS_AS(x.index({0, 4}), IndexError);
  CHECK(message([&] { x.index({0, 4}); }).find("dimension 1 with size 4") != std::string::npos);
  CHECK_THROWS_AS(x.index({0, 0, 0}), IndexError);
  CHECK_THROWS_AS(x.index({Ellipsis, 0, Ellipsis}), IndexError);
  CHECK_THROWS_AS(x.index({Slice(0, 2, 0)}), ValueError);
  CHECK(message([&] { x.index({Slice(), Slice(0, 2, 0)}); }).find("dimension 1 with size 4") != std::string::npos);
  CHECK_THROWS_AS(x.index({Slice(None, None, -1)}), ValueError);
  CHECK_THROWS_AS(x.slice(0, 0, 2, 0), ValueError);
  CHECK_THROWS_AS(x.index({"..x"}), ValueError);
  CHECK_THROWS_AS(full({}, 1.0)[0], IndexError);
  CHECK_THROWS_AS(zeros({3, -2}, dev), ValueError);  // a negative size
  CHECK(message([&] { zeros({3, -2}, dev); }).find("size -2 of dimension 1") != std::string::npos);
}

TEST_CASE("gradients of indexing views (gradcheck, float64)") {
  Device dev = device_under_test();
  using namespace vnn::indexing;
  Tensor x = randn({4, 5}, TensorOptions(dev).with(kFloat64)).requires_grad_();
  auto r = autograd::gradcheck(
      [](const std::vector<Tensor>& v) {
        const Tensor& t = v[0];
        Tensor strided = t.index({Slice(None, None, 2), 3});
        Tensor block = t.index({Slice(1, 4), Slice(0, 5, 2)}).t();
        return add(mul(t[1], t[-1]), add(sum(strided), sum(block)));
      },
      {x});
  CHECK(r.ok);
  auto r2 = autograd::gradcheck([](const std::vector<Tensor>& v) { return mul(v[0].mT(), 2.0).index({None, 2}); }, {x});
  CHECK(r2.ok);
}

TEST_CASE("printing shapes and dtypes, item<T>, device comparisons") {
  Device dev = device_under_test();
  std::ostringstream os;
  Tensor x = zeros({2, 3}, dev);
  os << x.sizes() << " " << x.dtype() << " " << x.device();
  CHECK(os.str() == "[2, 3] float32 " + dev.str());
  CHECK(full({}, 2.75, dev).item<float>() == 2.75f);
  CHECK(full({}, 7.0, TensorOptions(dev).with(kInt64)).item<int64_t>() == 7);
  CHECK(x.device() == dev);
  CHECK_FALSE(x.device() != dev);
  CHECK(x.cpu().device() == Device("cpu"));
}

TEST_CASE("creation defaults: a Device never changes the dtype") {
  Device dev = device_under_test();
  CHECK(randint(0, 10, {8}, dev).dtype() == kInt64);
  CHECK(randint(10, {8}, dev).dtype() == kInt64);
  CHECK(randint(0, 10, {8}, dev.str().c_str()).dtype() == kInt64);
  CHECK(randint(0, 10, {8}, TensorOptions(dev).with(kInt32)).dtype() == kInt32);
  CHECK(randint(0, 10, {8}).dtype() == kInt64);
  CHECK(randperm(5, dev).dtype() == kInt64);
  CHECK(randperm(5, dev).device() == dev);
  CHECK(randperm(5, TensorOptions(dev).with(kInt32)).dtype() == kInt32);
  CHECK(arange(0, 10, 1, dev).dtype() == kInt64);
  CHECK(arange(10, dev).dtype() == kInt64);
  CHECK(arange(10).to_vector<int64_t>().back() == 9);
  CHECK(arange(0.0, 1.0, 0.25, dev).dtype() == kFloat32);
  CHECK(arange(0, 10, 1, TensorOptions(dev).with(kFloat64)).dtype() == kFloat64);
  CHECK(arange(2.5, dev).dtype() == kFloat32);
  CHECK(zeros({2}, dev).dtype() == kFloat32);
  CHECK(rand({2}, dev).dtype() == kFloat32);
  CHECK(linspace(0, 1, 3, dev).dtype() == kFloat32);
  CHECK(eye(2, -1, dev).dtype() == kFloat32);
  Tensor i = arange(0, 4, 1, TensorOptions(dev).with(kInt32));
  CHECK(zeros_like(i, dev).dtype() == kInt32);  // *_like keeps the input's dtype
  // The failing program: int64 targets straight into cross_entropy.
  Tensor logits = randn({8, 10}, dev);
  CHECK_NOTHROW(nn::cross_entropy(logits, randint(0, 10, {8}, dev)));
}

TEST_CASE("device helpers: best_accelerator, is_accelerator") {
  std::optional<Device> acc = best_accelerator();
  bool any_accelerator = false;
  for (const auto& d : devices()) {
    CHECK(d.device.is_accelerator() == (d.type != DeviceType::cpu));
    any_accelerator |= d.type != DeviceType::cpu;
  }
  CHECK(acc.has_value() == any_accelerator);
  if (acc) {
    CHECK(acc->is_accelerator());
    for (const auto& d : devices()) {  // the first non-CPU device in ranking order
      if (d.type == DeviceType::cpu) continue;
      CHECK(d.device == *acc);
      break;
    }
  }
  CHECK_FALSE(Device("cpu").is_accelerator());
  CHECK_FALSE(Device("cuda", 9).is_accelerator());  // not found: not an accelerator
  Device chosen = best_accelerator().value_or(Device("cpu"));
  CHECK(is_available(chosen));
}
