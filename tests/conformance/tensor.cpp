// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensor spellings of LibTorch's C++ API reference (the Tensor class,
// creation functions and TensorOptions, torch::indexing, autograd basics),
// ported to vnn by renaming torch:: to vnn::.
#include "conformance.hpp"

using namespace vnn::indexing;

int main() {
  return conformance::run("tensor", [](const vnn::Device& device) {
    vnn::manual_seed(0);

    // ---- creation and TensorOptions ---------------------------------------
    auto options = vnn::TensorOptions().dtype(vnn::kFloat32).device(device).requires_grad(false);
    vnn::Tensor z = vnn::zeros({2, 3}, options);
    CHECK(z.sizes() == vnn::Shape({2, 3}) && z.dtype() == vnn::kFloat && z.device() == device);
    CHECK(z.sum().item<float>() == 0.0f);
    vnn::Tensor o = vnn::ones({4}, vnn::dtype(vnn::kLong).device(device));
    CHECK(o.dtype() == vnn::kInt64 && o.sum().item<int64_t>() == 4);
    CHECK(vnn::full({2, 2}, 7, vnn::device(device)).mean().item<float>() == 7.0f);
    CHECK(vnn::empty({3}, vnn::TensorOptions().dtype(vnn::kDouble).device(device)).dtype() == vnn::kFloat64);
    CHECK(vnn::eye(3, device).sum().item<float>() == 3.0f);
    CHECK(conformance::close(vnn::linspace(0, 1, 5, device), {0, 0.25, 0.5, 0.75, 1}));
    vnn::Tensor r = vnn::arange(0, 6, 1, device);
    CHECK(r.dtype() == vnn::kLong && r.numel() == 6);
    CHECK(vnn::arange(0.0, 1.0, 0.25, device).dtype() == vnn::kFloat);
    CHECK(vnn::zeros_like(r).sum().item<int64_t>() == 0 && vnn::ones_like(r).dtype() == vnn::kLong);
    CHECK(vnn::full_like(z, 2.5).sum().item<float>() == 15.0f);
    vnn::Tensor lit = vnn::tensor({{1, 2}, {3, 4}}, device);
    CHECK(lit.sizes() == vnn::Shape({2, 2}) && lit.dtype() == vnn::kFloat);
    vnn::Tensor grad_leaf = vnn::ones({2}, vnn::TensorOptions().dtype(vnn::kDouble).device(device).requires_grad(true));
    CHECK(grad_leaf.requires_grad() && grad_leaf.is_leaf());
    CHECK(vnn::kInt == vnn::kInt32 && vnn::kHalf == vnn::kFloat16 && vnn::kBFloat16 != vnn::kHalf);
    CHECK(vnn::zeros({1}, vnn::dtype(vnn::kBool)).dtype() == vnn::kBool);
    CHECK(vnn::zeros({2}, vnn::dtype(vnn::kHalf).device(device)).element_size() == 2);

    // ---- random numbers ----------------------------------------------------
    vnn::manual_seed(42);
    vnn::Tensor a1 = vnn::randn({3, 4}, device);
    vnn::manual_seed(42);
    vnn::Tensor a2 = vnn::randn({3, 4}, device);
    CHECK(vnn::equal(a1, a2));
    vnn::Tensor u = vnn::rand({1000}, device);
    CHECK(u.min().item<float>() >= 0.0f && u.max().item<float>() < 1.0f);
    vnn::Tensor ri = vnn::randint(0, 10, {100}, device);
    CHECK(ri.dtype() == vnn::kLong && ri.min().item<int64_t>() >= 0 && ri.max().item<int64_t>() < 10);
    vnn::Generator gen(7), gen2(7);
    CHECK(vnn::equal(vnn::randint(0, 5, {16}, gen, device), vnn::randint(0, 5, {16}, gen2, device)));
    CHECK(vnn::randperm(5, device).sum().item<int64_t>() == 10);

    // ---- shape and views ---------------------------------------------------
    vnn::Tensor x = vnn::arange(0, 12, 1, device).to(vnn::kFloat).view({3, 4});
    CHECK(x.size(0) == 3 && x.size(-1) == 4 && x.dim() == 2 && x.numel() == 12);
    CHECK(x.view({-1}).sizes() == vnn::Shape({12}));
    CHECK(x.reshape({4, 3}).sizes() == vnn::Shape({4, 3}));
    CHECK(x.t().is_contiguous() == false && x.t().contiguous().is_contiguous());
    CHECK(x.transpose(0, 1).sizes() == vnn::Shape({4, 3}));
    CHECK(x.permute({1, 0}).size(0) == 4);
    CHECK(x.unsqueeze(0).sizes() == vnn::Shape({1, 3, 4}) && x.unsqueeze(0).squeeze(0).sizes() == x.sizes());
    CHECK(x.flatten().numel() == 12);
    CHECK(x.expand_as(x).sizes() == x.sizes());
    auto pieces = x.split(2, 1);
    CHECK(pieces.size() == 2 && pieces[1].size(1) == 2);
    auto chunks = x.chunk(3, 0);
    CHECK(chunks.size() == 3 && chunks[2][0][0].item<float>() == 8.0f);
    CHECK(vnn::cat({x, x}, 0).size(0) == 6);
    CHECK(vnn::stack({x, x}, 0).sizes() == vnn::Shape({2, 3, 4}));

    // ---- indexing (torch::indexing) ----------------------------------------
    CHECK(x[1][2].item<float>() == 6.0f);
    CHECK(x.index({1, 2}).item<float>() == 6.0f);
    CHECK(conformance::close(x.index({Slice(), 0}), {0, 4, 8}));
    CHECK(conformance::close(x.index({Slice(1, None), Slice(None, None, 2)}), {4, 6, 8, 10}));
    CHECK(x.index({"...", None}).sizes() == vnn::Shape({3, 4, 1}));
    vnn::Tensor xc = x.clone();
    xc.index_put_({0, Slice()}, 0);
    CHECK(xc[0].sum().item<float>() == 0.0f && x[0].sum().item<float>() == 6.0f);
    CHECK(conformance::close(x.index_select(1, vnn::tensor({3, 0}, device).to(vnn::kLong)), {3, 0, 7, 4, 11, 8}));

    // ---- arithmetic and methods --------------------------------------------
    vnn::Tensor y = x + 1;
    CHECK(y.sum().item<float>() == 78.0f);
    CHECK((x * 2 - x).equal(x));
    CHECK(x.add(x, 2).sum().item<float>() == 198.0f);
    CHECK(x.mul(0.5).max().item<float>() == 5.5f);
    CHECK(x.pow(2).sum().item<float>() == 506.0f);
    CHECK(x.sqrt().pow(2).allclose(x));
    CHECK(x.neg().abs().equal(x));
    CHECK(x.clamp(2, 5).min().item<float>() == 2.0f && x.clamp(2, 5).max().item<float>() == 5.0f);
    CHECK(x.exp().log().allclose(x, 1e-4, 1e-5));
    CHECK(conformance::close(vnn::tensor({-1.5, 0.2}, device).sign(), {-1, 1}));
    CHECK(x.sigmoid().lt(1.0).all().item<bool>() && x.relu().equal(x));
    vnn::Tensor mask = x.gt(5);
    CHECK(mask.dtype() == vnn::kBool && mask.sum().item<int64_t>() == 6);
    CHECK(x.masked_fill(mask, 0).sum().item<float>() == 15.0f);
    CHECK(vnn::where(mask, x, vnn::zeros_like(x)).sum().item<float>() == 51.0f);
    CHECK(vnn::where(mask, x, 0.0).sum().item<float>() == 51.0f);
    CHECK(vnn::where(mask, 1.0, 0.0).sum().item<float>() == 6.0f);
    CHECK(x.where(mask, -1.0).sum().item<float>() == 45.0f);
    CHECK(x.eq(3).sum().item<int64_t>() == 1 && x.ne(3).sum().item<int64_t>() == 11);
    CHECK((x >= 6).logical_and(x < 8).sum().item<int64_t>() == 2);
    x.masked_fill_(x.lt(0), 0);

    // ---- reductions --------------------------------------------------------
    CHECK(x.sum().item<float>() == 66.0f);
    CHECK(conformance::close(x.sum(1), {6, 22, 38}));
    CHECK(x.sum({0, 1}).item<float>() == 66.0f);
    CHECK(x.sum(0, /*keepdim=*/true).sizes() == vnn::Shape({1, 4}));
    CHECK(x.mean().item<float>() == 5.5f && conformance::close(x.mean(0), {4, 5, 6, 7}));
    CHECK(x.max().item<float>() == 11.0f && x.min().item<float>() == 0.0f);
    auto [values, indices] = x.max(1);
    CHECK(conformance::close(values, {3, 7, 11}) && indices.dtype() == vnn::kLong);
    CHECK(std::get<1>(x.min(0)).sum().item<int64_t>() == 0);
    CHECK(x.argmax().item<int64_t>() == 11 && conformance::close(x.argmax(1), {3, 3, 3}));
    CHECK(x.argmin(0).sum().item<int64_t>() == 0);
    CHECK(vnn::tensor({1, 2, 3, 4}, device).prod().item<float>() == 24.0f);
    CHECK(std::abs(x.std().item<float>() - 3.6056f) < 1e-3);
    CHECK(std::abs(x.var().item<float>() - 13.0f) < 1e-3);
    CHECK(std::abs(vnn::tensor({3, 4}, device).norm().item<float>() - 5.0f) < 1e-6);
    CHECK(x.softmax(1).sum(1).allclose(vnn::ones({3}, device)));
    CHECK(x.log_softmax(1).exp().sum(1).allclose(vnn::ones({3}, device)));
    CHECK(vnn::softmax(x, 0).equal(x.softmax(0)));
    CHECK(x.logsumexp(1).sizes() == vnn::Shape({3}));
    auto [top_values, top_indices] = x.topk(2, /*dim=*/1);
    CHECK(conformance::close(top_values, {3, 2, 7, 6, 11, 10}) && conformance::close(top_indices, {3, 2, 3, 2, 3, 2}));
    CHECK(conformance::close(std::get<0>(vnn::topk(x, 1, 0, /*largest=*/false)), {0, 1, 2, 3}));

    // ---- triangles and sampling (a GPT's mask and its generate loop) --------
    vnn::Tensor causal = vnn::tril(vnn::ones({3, 3}, device));
    CHECK(conformance::close(causal, {1, 0, 0, 1, 1, 0, 1, 1, 1}));
    CHECK(vnn::ones({3, 3}, device).triu(1).sum().item<float>() == 3.0f);
    CHECK(x.tril().sum().item<float>() == 0 + 4 + 5 + 8 + 9 + 10);
    vnn::Tensor probs = vnn::tensor({0.0, 0.0, 1.0, 0.0}, device);
    vnn::Tensor next = vnn::multinomial(probs, /*num_samples=*/1);
    CHECK(next.dtype() == vnn::kLong && next.item<int64_t>() == 2);
    vnn::Tensor rows = vnn::tensor({{1, 0}, {0, 1}}, device);
    CHECK(conformance::close(rows.multinomial(3, /*replacement=*/true), {0, 0, 0, 1, 1, 1}));

    // ---- matrix products ---------------------------------------------------
    vnn::Tensor m = vnn::tensor({{1, 2}, {3, 4}}, device);
    CHECK(conformance::close(m.matmul(m), {7, 10, 15, 22}));
    CHECK(vnn::mm(m, vnn::eye(2, device)).equal(m));
    vnn::Tensor bm = vnn::stack({m, m}, 0);
    CHECK(vnn::bmm(bm, bm).equal(vnn::stack({m.mm(m), m.mm(m)}, 0)));
    CHECK(bm.bmm(bm).sizes() == vnn::Shape({2, 2, 2}));
    CHECK(vnn::matmul(vnn::tensor({1, 1}, device), m).allclose(vnn::tensor({4, 6}, device)));
    CHECK(vnn::allclose(m, m + 1e-7) && !vnn::allclose(m, m + 1e-2) && vnn::equal(m, m.clone()));

    // ---- types and devices -------------------------------------------------
    CHECK(x.to(vnn::kLong).dtype() == vnn::kLong && x.to(vnn::kDouble).scalar_type() == vnn::kDouble);
    CHECK(x.cpu().device() == vnn::Device("cpu") && x.to(device).device() == device);
    CHECK(x.options().device() == device && x.options().dtype() == vnn::kFloat);
    CHECK(vnn::zeros({1}, device).item<double>() == 0.0);
    vnn::Tensor host = x.cpu().contiguous();
    CHECK(host.data_ptr<float>()[5] == 5.0f);
    CHECK(x.to_vector<float>()[7] == 7.0f);

    // ---- autograd ----------------------------------------------------------
    vnn::Tensor w = vnn::randn({3, 2}, vnn::device(device).requires_grad(true));
    vnn::Tensor inp = vnn::ones({4, 3}, device);
    vnn::Tensor loss = inp.matmul(w).pow(2).sum();
    loss.backward();
    CHECK(w.grad().defined() && w.grad().sizes() == w.sizes());
    CHECK(w.grad().allclose(inp.t().matmul(inp.matmul(w)) * 2, 1e-4, 1e-4));
    {
      vnn::NoGradGuard no_grad;
      vnn::Tensor v = w * 2;
      CHECK(!v.requires_grad());
    }
    CHECK((w * 2).requires_grad() && !(w * 2).detach().requires_grad());
    vnn::Tensor leaf = vnn::tensor({1.0, 2.0}, device).requires_grad_();
    auto grads = vnn::autograd::grad({(leaf * leaf).sum()}, {leaf});
    CHECK(conformance::close(grads[0], {2, 4}));
  });
}
