// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Finite-difference gradient checking in float64.
#include <cmath>
#include <sstream>

#include "autograd/autograd.hpp"
#include "vnn/random.h"
#include "vnn/reduction.h"
#include "vnn/indexing.h"

namespace vnn::autograd {

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, double eps, double atol, double rtol) {
  GradcheckResult result;
  // A fixed random weighting makes every output element matter.
  Tensor out = f(inputs);
  Generator gen(12345);
  Tensor weight = rand(out.sizes(), TensorOptions(out.device()).with(out.dtype()), &gen);
  Tensor loss = sum(mul(out, weight));
  std::vector<Tensor> wrt;
  for (auto& t : inputs)
    if (t.requires_grad()) wrt.push_back(t);
  std::vector<Tensor> analytic = grad({loss}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);
  for (size_t k = 0; k < wrt.size(); ++k)
    if (!analytic[k].defined()) analytic[k] = zeros_like(wrt[k]);

  // Perturb the inputs in place (not copies): f may reach them through
  // closures, as a module's forward reaches its parameters. f itself runs
  // in the caller's grad mode (it may take gradients itself, as a gradient
  // penalty does).
  size_t k = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    std::vector<double> a = analytic[k++].to_vector<double>();
    std::vector<double> base = inputs[i].to_vector<double>();
    Tensor target = inputs[i];
    auto set_values = [&](const std::vector<double>& v) {
      NoGradGuard no_grad;
      target.copy_(from_vector(v, target.sizes(), target.device()).to(target.dtype()));
    };
    for (size_t j = 0; j < base.size(); ++j) {
      auto value_at = [&](double delta) {
        std::vector<double> moved = base;
        moved[j] += delta;
        set_values(moved);
        Tensor value = f(inputs);
        NoGradGuard no_grad;
        return sum(mul(value.detach(), weight)).item();
      };
      double numeric = (value_at(eps) - value_at(-eps)) / (2 * eps);
      double err = std::fabs(numeric - a[j]);
      result.max_abs_error = std::max(result.max_abs_error, err);
      if (err > atol + rtol * std::fabs(numeric) && result.ok) {
        result.ok = false;
        std::ostringstream m;
        m << "input " << i << " element " << j << ": analytic " << a[j] << ", numeric " << numeric;
        result.message = m.str();
      }
    }
    set_values(base);
  }
  return result;
}

GradcheckResult gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                              const std::vector<Tensor>& inputs, double eps, double atol, double rtol) {
  std::vector<Tensor> wrt;
  for (auto& t : inputs)
    if (t.requires_grad()) wrt.push_back(t);
  Tensor weight;  // drawn once, from the first output's shape
  // The first gradients, flattened into one tensor, as a function of the
  // inputs: gradcheck then differentiates it once more.
  auto first_gradients = [&](const std::vector<Tensor>& in) {
    Tensor out = f(in);
    if (!weight.defined()) {
      Generator gen(54321);
      weight = rand(out.sizes(), TensorOptions(out.device()).with(out.dtype()), &gen);
    }
    std::vector<Tensor> g = grad({sum(mul(out, weight))}, wrt, {}, true, /*create_graph=*/true, true);
    std::vector<Tensor> flat;
    for (size_t k = 0; k < g.size(); ++k) flat.push_back((g[k].defined() ? g[k] : zeros_like(wrt[k])).reshape({-1}));
    return cat(flat, 0);
  };
  return gradcheck(first_gradients, inputs, eps, atol, rtol);
}

}  // namespace vnn::autograd
