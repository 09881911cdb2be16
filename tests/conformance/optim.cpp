// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch::optim spellings of LibTorch's C++ API reference and frontend
// tutorial (optimizers with chained options, zero_grad / step, parameter
// groups, learning-rate schedulers, gradient clipping, optimizer state),
// ported to vnn by renaming torch:: to vnn::, each checked against the
// update rule computed by hand.
#include "conformance.hpp"

namespace optim = vnn::optim;

namespace {

// loss = sum(w * w): d loss / d w = 2 w.
void square_loss_backward(const vnn::Tensor& w) { (w * w).sum().backward(); }

}  // namespace

int main() {
  return conformance::run("optim", [](const vnn::Device& device) {
    auto leaf = [&](std::initializer_list<double> v) {
      return vnn::tensor(v, vnn::TensorOptions().dtype(vnn::kDouble).device(device).requires_grad(true));
    };

    // ---- SGD: w <- w - lr * g; with momentum, buf <- m * buf + g ------------
    vnn::Tensor w = leaf({1.0, 2.0});
    optim::SGD sgd({w}, optim::SGDOptions(0.1));
    square_loss_backward(w);
    sgd.step();
    CHECK(conformance::close(w, {0.8, 1.6}, 1e-12));
    sgd.zero_grad();
    CHECK(!w.grad().defined());
    square_loss_backward(w);
    w.mutable_grad() = vnn::Tensor();  // LibTorch's way to clear one gradient
    CHECK(!w.grad().defined());

    vnn::Tensor wm = leaf({1.0, -1.0});
    optim::SGD sgdm({wm}, optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.0).nesterov(false));
    double x = 1.0, buf = 0.0;
    for (int step = 0; step < 3; ++step) {
      sgdm.zero_grad();
      square_loss_backward(wm);
      sgdm.step();
      const double g = 2 * x;
      buf = step == 0 ? g : 0.9 * buf + g;
      x -= 0.1 * buf;
    }
    CHECK(conformance::close(wm, {x, -x}, 1e-12));

    // ---- Adam / AdamW: the first step moves each weight by lr * sign(g) ----
    vnn::Tensor wa = leaf({1.0, -2.0});
    optim::Adam adam({wa}, optim::AdamOptions(0.1).betas(0.9, 0.999).eps(1e-8));
    square_loss_backward(wa);
    adam.step();
    CHECK(conformance::close(wa, {0.9, -1.9}, 1e-6));
    vnn::Tensor ww = leaf({1.0, -2.0});
    optim::AdamW adamw({ww}, optim::AdamWOptions(0.1).betas({0.9, 0.999}).weight_decay(0.5));
    square_loss_backward(ww);
    adamw.step();
    CHECK(conformance::close(ww, {1.0 * (1 - 0.05) - 0.1, -2.0 * (1 - 0.05) + 0.1}, 1e-6));

    // ---- the other optimizers decrease the loss ------------------------------
    vnn::Tensor wr = leaf({1.0, -2.0}), wg = leaf({1.0, -2.0});
    optim::RMSprop rms({wr}, optim::RMSpropOptions(0.01));
    optim::Adagrad ada({wg}, optim::AdagradOptions(0.1));
    for (int step = 0; step < 5; ++step) {
      rms.zero_grad();
      ada.zero_grad();
      square_loss_backward(wr);
      square_loss_backward(wg);
      rms.step();
      ada.step();
    }
    CHECK((wr * wr).sum().item<double>() < 5.0 && (wg * wg).sum().item<double>() < 5.0);

    // ---- parameter groups and the learning rate ------------------------------
    vnn::Tensor p1 = leaf({1.0}), p2 = leaf({1.0});
    optim::SGD groups({optim::ParamGroup({p1}), optim::ParamGroup({p2}, {{"lr", 0.5}})}, optim::SGDOptions(0.1));
    CHECK(groups.param_groups().size() == 2);
    CHECK(groups.param_groups()[0].lr() == 0.1 && groups.param_groups()[1].lr() == 0.5);
    square_loss_backward(p1);
    square_loss_backward(p2);
    groups.step();
    CHECK(conformance::close(p1, {0.8}, 1e-12) && conformance::close(p2, {0.0}, 1e-12));
    for (auto& g : groups.param_groups()) g.set_lr(0.01);
    CHECK(groups.param_groups()[1].lr() == 0.01);
    // Decay and no-decay groups with their own options (nanoGPT's configure_optimizers).
    vnn::Tensor decay = leaf({1.0}), no_decay = leaf({1.0});
    std::vector<optim::OptimizerParamGroup> param_groups;
    param_groups.emplace_back(std::vector<vnn::Tensor>{decay}, optim::AdamWOptions(0.1).weight_decay(0.5));
    param_groups.emplace_back(std::vector<vnn::Tensor>{no_decay}, optim::AdamWOptions(0.1).weight_decay(0.0));
    optim::AdamW grouped(param_groups, optim::AdamWOptions(0.1).betas({0.9, 0.95}));
    square_loss_backward(decay);
    square_loss_backward(no_decay);
    grouped.step();
    CHECK(conformance::close(decay, {0.95 - 0.1}, 1e-6) && conformance::close(no_decay, {0.9}, 1e-6));

    // ---- schedulers -----------------------------------------------------------
    vnn::Tensor ps = leaf({1.0});
    optim::SGD sched_opt({ps}, optim::SGDOptions(1.0));
    optim::StepLR scheduler(sched_opt, /*step_size=*/2, /*gamma=*/0.5);
    for (int epoch = 0; epoch < 4; ++epoch) scheduler.step();
    CHECK(std::abs(sched_opt.param_groups()[0].lr() - 0.25) < 1e-12);
    optim::CosineAnnealingLR cosine(sched_opt, /*T_max=*/10);
    CHECK(sched_opt.param_groups()[0].lr() <= 0.25);

    // ---- gradient clipping ------------------------------------------------------
    vnn::Tensor pc = leaf({3.0, 4.0});
    pc.set_grad(vnn::tensor({3.0, 4.0}, vnn::TensorOptions().dtype(vnn::kDouble).device(device)));
    vnn::Tensor total = vnn::nn::utils::clip_grad_norm_({pc}, /*max_norm=*/1.0);
    CHECK(std::abs(total.item<double>() - 5.0) < 1e-9);
    CHECK(conformance::close(pc.grad(), {0.6, 0.8}, 1e-6));
    vnn::nn::utils::clip_grad_value_({pc}, 0.7);
    CHECK(conformance::close(pc.grad(), {0.6, 0.7}, 1e-6));

    // ---- optimizer state round trip -----------------------------------------------
    vnn::StateDict state = adam.state_dict();
    CHECK(!state.empty());
    vnn::Tensor wa2 = wa.detach().clone().requires_grad_();
    optim::Adam adam2({wa2}, optim::AdamOptions(0.1));
    adam2.load_state_dict(state);
    adam.zero_grad();
    square_loss_backward(wa);
    square_loss_backward(wa2);
    adam.step();
    adam2.step();
    CHECK(wa.allclose(wa2, 1e-9, 1e-12));
  });
}
