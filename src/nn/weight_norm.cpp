// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// weight_norm and spectral_norm as forward pre-hooks: the hook is a
// function object holding its settings, so remove_* reads them back
// (std::function::target) and clone() installs it again on the copy.
#include "vnn/detail/message.h"
#include "vnn/nn/weight_norm.h"

#include <initializer_list>
#include <vector>

#include "vnn/autograd.h"
#include "vnn/composite.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/random.h"
#include "vnn/samplers.h"
#include "vnn/reduction.h"

namespace vnn::nn::utils {

namespace {

std::string weight_norm_tag(const std::string& name) { return "weight_norm:" + name; }
std::string spectral_norm_tag(const std::string& name) { return "spectral_norm:" + name; }

// `dim` in [0, rank), or -1 kept as "the whole tensor" where whole_minus_one.
int64_t checked_dim(const char* fn, const Module& m, const std::string& name, const Tensor& w, int64_t dim,
                    bool whole_minus_one) {
  if (whole_minus_one && dim == -1) return -1;
  const int64_t rank = w.dim();
  VNN_CHECK(IndexError, dim >= -rank && dim < rank, fn, ": dim ", dim, " is out of range for ", m.type_name(), ".",
            name, " of shape ", w.sizes());
  return dim < 0 ? dim + rank : dim;
}

// g * v / ||v||, the norm over the dims where g has size 1 (all of them for
// a 0-dim g): the same as PyTorch's norm over every dim but `dim`, since a
// dim of size 1 adds nothing to the sum.
Tensor weight_from(const Tensor& g, const Tensor& v) {
  if (g.dim() == 0) return mul(v, div(g, norm(v)));
  std::vector<int64_t> dims;
  for (int d = 0; d < g.dim(); ++d)
    if (g.size(d) == 1) dims.push_back(d);
  Tensor n = dims.empty() ? abs(v) : norm(v, 2.0, dims, true);
  return mul(v, div(g, n));
}

struct WeightNormHook {
  std::string name;
  void operator()(Module& m) const {
    m.set_attribute(name, weight_from(m.parameter(name + "_g"), m.parameter(name + "_v")));
  }
};

// W: orig with `dim` first, flattened to [size(dim), rest].
Tensor weight_matrix(const Tensor& w, int64_t dim) {
  Tensor m = w;
  if (dim != 0) {
    Shape order{dim};
    for (int64_t d = 0; d < w.dim(); ++d)
      if (d != dim) order.push_back(d);
    m = w.permute(order);
  }
  return m.reshape({m.size(0), -1});
}

// x / max(||x||, eps), as F.normalize(x, dim=0, eps=eps) of a vector.
Tensor normalized(const Tensor& x, double eps) { return div(x, norm(x).clamp_min(eps)); }

struct SpectralNormHook {
  std::string name;
  int64_t n_power_iterations;
  double eps;
  int64_t dim;
  // orig / sigma; power: update u and v in place first (training mode).
  Tensor weight(Module& m, bool power) const {
    Tensor orig = m.parameter(name + "_orig"), u = m.buffer(name + "_u"), v = m.buffer(name + "_v");
    Tensor wm = weight_matrix(orig, dim);
    if (power) {
      autograd::NoGradGuard no_grad;
      Tensor w = wm.detach();
      for (int64_t i = 0; i < n_power_iterations; ++i) {
        v.copy_(normalized(mv(w.t(), u), eps));
        u.copy_(normalized(mv(w, v), eps));
      }
    }
    // Copies: the backward reads u and v, which the next call updates in place.
    Tensor sigma = dot(u.clone(), mv(wm, v.clone()));
    return div(orig, sigma);
  }
  void operator()(Module& m) const { m.set_attribute(name, weight(m, m.is_training())); }
};

void check_new_names(const char* fn, const Module& m, const std::string& name,
                     std::initializer_list<const char*> suffixes) {
  VNN_CHECK(ValueError,
            m.find_forward_pre_hook(weight_norm_tag(name)) < 0 && m.find_forward_pre_hook(spectral_norm_tag(name)) < 0,
            fn, ": ", m.type_name(), ".", name,
            " already has a weight_norm or spectral_norm hook; remove it first (remove_weight_norm / remove_spectral_norm)");
  VNN_CHECK(ValueError, m.has_parameter(name), fn, ": ", m.type_name(), " has no parameter '", name, "'");
  for (const char* s : suffixes)
    VNN_CHECK(ValueError, !m.has_parameter(name + s), fn, ": ", m.type_name(), " already has a parameter '", name, s,
              "'");
}

}  // namespace

Module& weight_norm(Module& module, const std::string& name, int64_t dim) {
  const std::string tag = weight_norm_tag(name);
  check_new_names("weight_norm", module, name, {"_g", "_v"});
  Tensor w = module.parameter(name);
  dim = checked_dim("weight_norm", module, name, w, dim, true);
  Tensor g;
  {
    autograd::NoGradGuard no_grad;
    if (dim == -1) g = norm(w);
    else {
      std::vector<int64_t> dims;
      for (int d = 0; d < w.dim(); ++d)
        if (d != dim) dims.push_back(d);
      g = dims.empty() ? abs(w) : norm(w, 2.0, dims, true);
    }
  }
  module.unregister_parameter(name);
  module.register_parameter(name + "_g", g);
  module.register_parameter(name + "_v", w);  // the former weight itself, as PyTorch's weight.data
  WeightNormHook hook{name};
  hook(module);
  module.register_forward_pre_hook(hook, tag, [name, dim](Module& copy) { weight_norm(copy, name, dim); });
  return module;
}

Module& remove_weight_norm(Module& module, const std::string& name) {
  const int64_t handle = module.find_forward_pre_hook(weight_norm_tag(name));
  VNN_CHECK(ValueError, handle >= 0, "remove_weight_norm: weight_norm of '", name, "' not found in ",
            module.type_name());
  Tensor w;
  {
    autograd::NoGradGuard no_grad;
    w = weight_from(module.parameter(name + "_g"), module.parameter(name + "_v"));
  }
  module.remove_forward_pre_hook(handle);
  module.unregister_parameter(name + "_g");
  module.unregister_parameter(name + "_v");
  module.register_parameter(name, w);
  return module;
}

Module& spectral_norm(Module& module, const std::string& name, int64_t n_power_iterations, double eps,
                      std::optional<int64_t> dim) {
  const std::string tag = spectral_norm_tag(name);
  check_new_names("spectral_norm", module, name, {"_orig"});
  VNN_CHECK(ValueError, n_power_iterations > 0, "spectral_norm: expected n_power_iterations to be positive, got ",
            n_power_iterations);
  VNN_CHECK(ValueError, eps > 0, "spectral_norm: eps must be positive, got ", eps);
  Tensor w = module.parameter(name);
  const bool transposed = module.type_name().rfind("ConvTranspose", 0) == 0;  // weight [in, out / groups, k...]
  const int64_t d = checked_dim("spectral_norm", module, name, w, dim.value_or(transposed ? 1 : 0), false);
  SpectralNormHook hook{name, n_power_iterations, eps, d};
  Tensor u, v;
  {
    autograd::NoGradGuard no_grad;
    Tensor wm = weight_matrix(w, d);
    TensorOptions opt = TensorOptions(w.dtype()).device(w.device());
    u = normalized(normal(0.0, 1.0, {wm.size(0)}, opt), eps);
    v = normalized(normal(0.0, 1.0, {wm.size(1)}, opt), eps);
  }
  module.unregister_parameter(name);
  module.register_parameter(name + "_orig", w);
  module.set_attribute(name, w.detach());  // PyTorch's weight.data until the first call
  module.register_buffer(name + "_u", u);
  module.register_buffer(name + "_v", v);
  module.register_forward_pre_hook(hook, tag, [name, n_power_iterations, eps, d](Module& copy) {
    spectral_norm(copy, name, n_power_iterations, eps, d);
  });
  return module;
}

Module& remove_spectral_norm(Module& module, const std::string& name) {
  const int64_t handle = module.find_forward_pre_hook(spectral_norm_tag(name));
  VNN_CHECK(ValueError, handle >= 0, "remove_spectral_norm: spectral_norm of '", name, "' not found in ",
            module.type_name());
  const auto* hook = module.forward_pre_hook(handle).target<SpectralNormHook>();
  Tensor w;
  {
    autograd::NoGradGuard no_grad;
    w = hook->weight(module, false);
  }
  module.remove_forward_pre_hook(handle);
  module.unregister_parameter(name + "_orig");
  module.unregister_buffer(name + "_u");
  module.unregister_buffer(name + "_v");
  module.register_parameter(name, w);
  return module;
}

}  // namespace vnn::nn::utils
