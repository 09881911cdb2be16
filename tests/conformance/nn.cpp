// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch::nn spellings of LibTorch's C++ frontend tutorial ("Using the
// PyTorch C++ Frontend": modules with register_parameter / register_module,
// holders, the DCGAN discriminator as a Sequential, the training loop) and
// of the C++ API reference's layer, container, loss and init pages, ported
// to vnn by renaming torch:: to vnn::.
#include "conformance.hpp"

namespace nn = vnn::nn;

// The tutorial's first module: parameters registered by hand.
struct Net : nn::Module {
  Net(int64_t N, int64_t M) {
    W = register_parameter("W", vnn::randn({N, M}));
    b = register_parameter("b", vnn::randn({M}));
  }
  vnn::Tensor forward(const vnn::Tensor& input) { return vnn::addmm(b, input, W); }
  vnn::Tensor W, b;
};

// The tutorial's second module: a submodule through its holder.
struct Net2 : nn::Module {
  Net2(int64_t N, int64_t M) : linear(register_module("linear", nn::Linear(N, M))) {
    another_bias = register_parameter("b", vnn::randn({M}));
  }
  vnn::Tensor forward(const vnn::Tensor& input) { return linear(input) + another_bias; }
  nn::Linear linear;
  vnn::Tensor another_bias;
};

// The usual LibTorch block signature, forward(Tensor) by value, inside a Sequential.
struct ScaleImpl : nn::Module {
  explicit ScaleImpl(double k) : k(k) {}
  vnn::Tensor forward(vnn::Tensor x) { return x * k; }
  double k;
};
VNN_MODULE(Scale);

// Weight tying as nanoGPT's (lm_head.weight = wte.weight): one parameter tensor.
struct TiedImpl : nn::Module {
  TiedImpl() {
    wte = register_module("wte", nn::Embedding(10, 4));
    lm_head = register_module("lm_head", nn::Linear(nn::LinearOptions(4, 10).bias(false)));
    lm_head->weight = wte->weight;
  }
  vnn::Tensor forward(const vnn::Tensor& idx) { return lm_head(wte(idx)); }
  nn::Embedding wte{nullptr};
  nn::Linear lm_head{nullptr};
};
VNN_MODULE(Tied);

// TORCH_MODULE with a Cloneable implementation.
struct ClassifierImpl : nn::Cloneable<ClassifierImpl> {
  ClassifierImpl() { reset(); }
  void reset() override {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 4, 3).stride(1).padding(1)));
    bn = register_module("bn", nn::BatchNorm2d(4));
    fc = register_module("fc", nn::Linear(nn::LinearOptions(4 * 4 * 4, 3).bias(true)));
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor h = vnn::relu(bn(conv(x)));
    h = vnn::max_pool2d(h, 2);
    return fc(h.flatten(1));
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Linear fc{nullptr};
};
VNN_MODULE(Classifier);

int main() {
  return conformance::run("nn", [](const vnn::Device& device) {
    vnn::manual_seed(1);

    // ---- the tutorial's modules ---------------------------------------------
    Net net(4, 5);
    CHECK(net.parameters().size() == 2);
    std::vector<std::string> names;
    for (const auto& pair : net.named_parameters()) {
      names.push_back(pair.key());
      CHECK(pair.value().requires_grad());
    }
    CHECK(names == std::vector<std::string>({"W", "b"}));
    vnn::Tensor out = net.forward(vnn::ones({2, 4}));
    CHECK(out.sizes() == vnn::Shape({2, 5}));
    CHECK(out.allclose(vnn::ones({2, 4}).matmul(net.W) + net.b));
    Net2 net2(4, 5);
    CHECK(net2.parameters().size() == 3);
    CHECK(net2.named_parameters()[0].key() == "b" && net2.named_parameters()[1].key() == "linear.weight");
    CHECK(net2.forward(vnn::ones({2, 4})).sizes() == vnn::Shape({2, 5}));
    auto shared = std::make_shared<Net2>(4, 5);
    shared->to(device);
    CHECK(shared->parameters()[0].device() == device);

    // ---- holders, Cloneable, train / eval, to(device) -----------------------
    Classifier model;
    model->to(device);
    CHECK(model->is_training());
    vnn::Tensor x = vnn::randn({2, 1, 8, 8}, device);
    vnn::Tensor logits = model(x);
    CHECK(logits.sizes() == vnn::Shape({2, 3}) && logits.device() == device);
    model->eval();
    CHECK(!model->is_training() && !model->bn->is_training());
    vnn::Tensor eval1 = model(x);
    CHECK(eval1.allclose(model->forward(x)));
    model->train();
    auto copy = std::dynamic_pointer_cast<ClassifierImpl>(model->clone());
    CHECK(copy && copy->fc->weight.allclose(model->fc->weight) && copy->fc->weight.impl() != model->fc->weight.impl());
    CHECK(model->named_children().size() == 3);
    CHECK(model->named_modules().size() == 4);
    CHECK(model->state_dict().size() == 9);  // conv 2, bn 2 + 3 buffers, fc 2
    int64_t count = 0;
    for (const auto& p : model->parameters()) count += p.numel();
    CHECK(count == model->num_parameters() && count == 4 * 9 + 4 + 4 + 4 + 64 * 3 + 3);
    model->zero_grad();

    // ---- the DCGAN discriminator as a Sequential ----------------------------
    nn::Sequential discriminator(nn::Conv2d(nn::Conv2dOptions(1, 8, 4).stride(2).padding(1).bias(false)),
                                 nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                                 nn::Conv2d(nn::Conv2dOptions(8, 16, 4).stride(2).padding(1).bias(false)),
                                 nn::BatchNorm2d(16), nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                                 nn::Flatten(), nn::Linear(16 * 2 * 2, 1), nn::Sigmoid());
    discriminator->to(device);
    vnn::Tensor d = discriminator->forward(vnn::randn({3, 1, 8, 8}, device));
    CHECK(d.sizes() == vnn::Shape({3, 1}) && d.gt(0).all().item<bool>() && d.lt(1).all().item<bool>());
    CHECK(discriminator->size() == 8);
    CHECK(discriminator[0]->as<nn::Conv2d>() != nullptr);
    CHECK(discriminator[6]->as<nn::Linear>()->weight.sizes() == vnn::Shape({1, 64}));
    vnn::Tensor real_labels = vnn::empty({3}, device).uniform_(0.8, 1.0);
    CHECK(real_labels.ge(0.8).all().item<bool>());
    vnn::Tensor d_loss = vnn::nn::binary_cross_entropy(d.view({-1}), real_labels);
    d_loss.backward();
    CHECK(discriminator[0]->as<nn::Conv2d>()->weight.grad().defined());

    // ---- layers -------------------------------------------------------------------
    vnn::Tensor v = vnn::randn({4, 6}, device);
    nn::Linear lin(nn::LinearOptions(6, 2).bias(false));
    lin->to(device);
    CHECK(!lin->bias.defined() && lin(v).allclose(v.matmul(lin->weight.t())));
    nn::ReLU relu;
    CHECK(relu(v).equal(v.relu()));
    CHECK(nn::GELU()(v).allclose(vnn::gelu(v)));
    nn::GELU gelu_tanh(nn::GELUOptions().approximate("tanh"));
    CHECK(gelu_tanh(v).allclose(vnn::gelu(v), 1e-3, 1e-3) && !gelu_tanh(v).equal(vnn::gelu(v)));
    CHECK(nn::SiLU()(v).allclose(v * v.sigmoid()));
    CHECK(nn::Tanh()(v).equal(v.tanh()) && nn::Sigmoid()(v).equal(v.sigmoid()));
    CHECK(nn::Softmax(1)(v).allclose(v.softmax(1)) && nn::LogSoftmax(1)(v).allclose(v.log_softmax(1)));
    CHECK(nn::Identity()(v).equal(v));
    nn::Dropout drop(0.5);
    drop->eval();
    CHECK(drop(v).equal(v));
    nn::LayerNorm ln(nn::LayerNormOptions({6}).eps(1e-5));
    ln->to(device);
    CHECK(ln(v).mean(1).abs().max().item<float>() < 1e-5);
    nn::Embedding emb(10, 3);
    emb->to(device);
    CHECK(emb(vnn::arange(0, 4, 1, device)).sizes() == vnn::Shape({4, 3}));
    nn::GroupNorm gn(2, 4);
    gn->to(device);
    CHECK(gn(vnn::randn({2, 4, 3}, device)).sizes() == vnn::Shape({2, 4, 3}));
    vnn::Tensor img = vnn::randn({1, 2, 6, 6}, device);
    CHECK(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2))(img).sizes() == vnn::Shape({1, 2, 3, 3}));
    CHECK(nn::AvgPool2d(3)(img).sizes() == vnn::Shape({1, 2, 2, 2}));
    CHECK(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1}))(img).allclose(img.mean({2, 3}, true)));
    CHECK(nn::Flatten()(img).sizes() == vnn::Shape({1, 72}));

    // ---- attention and transformer layers -------------------------------------------
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).batch_first(true));
    mha->to(device);
    vnn::Tensor seq = vnn::randn({2, 5, 8}, device);
    auto [attended, weights] = mha(seq, seq, seq);
    CHECK(attended.sizes() == vnn::Shape({2, 5, 8}) && weights.sizes() == vnn::Shape({2, 5, 5}));
    CHECK(weights.sum(-1).allclose(vnn::ones({2, 5}, device), 1e-5, 1e-5));
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0).batch_first(true));
    layer->to(device);
    CHECK(layer(seq).sizes() == vnn::Shape({2, 5, 8}));

    // ---- containers ----------------------------------------------------------------
    nn::ModuleList list{nn::Linear(3, 3), nn::ReLU()};
    list->push_back(nn::Linear(3, 1));
    CHECK(list->size() == 3 && list[2]->as<nn::Linear>()->out_features == 1);
    nn::ModuleDict dict({{"proj", nn::Linear(3, 2)}, {"act", nn::ReLU()}});
    dict->insert("out", nn::Linear(2, 1).ptr());
    CHECK(dict->size() == 3 && dict->contains("proj") && dict["proj"]->as<nn::Linear>()->in_features == 3);
    nn::Sequential scaled(nn::Linear(3, 3), Scale(2.0));
    scaled->to(device);
    vnn::Tensor s_in = vnn::randn({2, 3}, device);
    CHECK(scaled(s_in).allclose(scaled[0]->as<nn::Linear>()->forward(s_in) * 2));

    // ---- apply (nanoGPT's _init_weights) and weight tying ------------------------------
    Tied tied;
    tied->apply([](nn::Module& m) {
      if (auto* linear = m.as<nn::Linear>()) nn::init::normal_(linear->weight, 0.0, 0.02);
    });
    CHECK(tied->parameters().size() == 1);  // one tensor under two names
    // As PyTorch: named_parameters() lists the tensor once, state_dict() under both names.
    CHECK(tied->named_parameters().size() == 1 && tied->state_dict().size() == 2);
    CHECK(tied->lm_head->weight.impl() == tied->wte->weight.impl());
    CHECK(tied->wte->weight.std().item<float>() < 0.05f);  // initialised through lm_head
    tied->to(device);
    tied(vnn::arange(0, 3, 1, device)).sum().backward();
    CHECK(tied->wte->weight.grad().defined() && tied->lm_head->weight.grad().impl() == tied->wte->weight.grad().impl());

    // ---- losses as modules ----------------------------------------------------------
    vnn::Tensor target = vnn::tensor({0, 1, 0, 1}, device).to(vnn::kLong);
    vnn::Tensor scores = vnn::randn({4, 2}, device);
    nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().reduction(vnn::kSum));
    CHECK(std::abs(ce(scores, target).item<double>() - vnn::nn::cross_entropy(scores, target).item<double>() * 4) <
          1e-4);
    nn::NLLLoss nll;
    CHECK(nll(scores.log_softmax(1), target).allclose(vnn::nn::cross_entropy(scores, target)));
    nn::MSELoss mse;
    CHECK(mse(vnn::ones({3}, device), vnn::zeros({3}, device)).item<float>() == 1.0f);
    nn::BCEWithLogitsLoss bce;
    CHECK(bce(vnn::zeros({2}, device), vnn::ones({2}, device)).item<float>() > 0.69f);

    // ---- init ------------------------------------------------------------------------------
    vnn::Tensor w = vnn::empty({4, 5}, device);
    {
      vnn::NoGradGuard no_grad;
      nn::init::xavier_uniform_(w);
      CHECK(w.abs().max().item<float>() <= std::sqrt(6.0f / 9.0f));
      nn::init::kaiming_normal_(w);
      nn::init::zeros_(w);
      CHECK(w.sum().item<float>() == 0.0f);
      nn::init::constant_(w, 0.5);
      CHECK(w.mean().item<float>() == 0.5f);
      nn::init::normal_(w, 0.0, 0.02);
      nn::init::ones_(w);
      CHECK(w.equal(vnn::ones({4, 5}, device)));
    }

    // ---- a training loop (the tutorial's shape) -------------------------------------------
    Classifier clf;
    clf->to(device);
    vnn::optim::SGD optimizer(clf->parameters(), vnn::optim::SGDOptions(0.05).momentum(0.9));
    vnn::Tensor data = vnn::randn({8, 1, 8, 8}, device), labels = vnn::randint(0, 3, {8}, device);
    double first = 0, last = 0;
    for (int step = 0; step < 15; ++step) {
      optimizer.zero_grad();
      vnn::Tensor loss = vnn::nn::cross_entropy(clf(data), labels);
      loss.backward();
      optimizer.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    CHECK(last < first);
  });
}
