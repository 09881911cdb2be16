// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch.nn.utils.weight_norm / spectral_norm and their remove_ functions:
// a module's weight becomes a function of new parameters, recomputed by a
// forward pre-hook each time the module is called (fc(x), a Sequential),
// with PyTorch's parameter and buffer names.
//
//   vnn::nn::Linear fc(20, 40);
//   vnn::nn::utils::weight_norm(fc);         // parameters bias, weight_g [40, 1], weight_v [40, 20]
//   vnn::nn::Conv2d conv(vnn::nn::Conv2dOptions(3, 16, 3));
//   vnn::nn::utils::spectral_norm(conv);     // parameter weight_orig, buffers weight_u, weight_v
//   auto y = conv(x);                        // conv->weight = weight_orig / sigma, one power iteration
//
// fc->weight stays readable: the computed weight of the last call (PyTorch's
// module.weight). A clone() carries the split (its hook is installed on the copy).
#pragma once
#include <optional>
#include <string>

#include "vnn/nn/module.h"

namespace vnn::nn::utils {

/// Splits parameter `name` (w) of `module` into a magnitude `name`_g = ||w||
/// and a direction `name`_v = w, the norm taken over every dimension but
/// `dim` (g keeps w's size at dim and 1 elsewhere; dim -1: over the whole
/// tensor, g 0-dim, as PyTorch's dim=None), and recomputes w = g * v / ||v||
/// before each call. ValueError when `name` is no parameter or is already
/// split; IndexError for a dim out of range.
Module& weight_norm(Module& module, const std::string& name = "weight", int64_t dim = 0);
/// Undoes weight_norm: `name` is a parameter again holding the current
/// g * v / ||v||; `name`_g and `name`_v are gone. ValueError when `name` is not split.
Module& remove_weight_norm(Module& module, const std::string& name = "weight");

/// Spectral normalisation (Miyato et al.): parameter `name` becomes
/// `name`_orig, with buffers `name`_u and `name`_v (random unit vectors at
/// first), and before each call `name` = orig / sigma, sigma = u^T W v,
/// where W is orig with `dim` moved first and flattened to a matrix; in
/// training mode n_power_iterations steps v = normalize(W^T u),
/// u = normalize(W v) (normalize: x / max(||x||, eps)) update u and v in
/// place first. dim defaults to 1 for the ConvTranspose modules, else 0.
/// ValueError when `name` is no parameter, is already normalised, or for
/// n_power_iterations < 1 or eps <= 0; IndexError for a dim out of range.
Module& spectral_norm(Module& module, const std::string& name = "weight", int64_t n_power_iterations = 1,
                      double eps = 1e-12, std::optional<int64_t> dim = std::nullopt);
/// Undoes spectral_norm: `name` is a parameter again holding orig / sigma
/// with the current u and v (no power iteration); the _orig parameter and
/// the _u, _v buffers are gone. ValueError when `name` is not normalised.
Module& remove_spectral_norm(Module& module, const std::string& name = "weight");

/// weight_norm on a holder (Linear, Conv2d, ...); returns the holder.
template <class H, std::enable_if_t<is_module_holder_v<H>, int> = 0>
H weight_norm(H module, const std::string& name = "weight", int64_t dim = 0) {
  weight_norm(static_cast<Module&>(*module), name, dim);
  return module;
}
/// remove_weight_norm on a holder; returns the holder.
template <class H, std::enable_if_t<is_module_holder_v<H>, int> = 0>
H remove_weight_norm(H module, const std::string& name = "weight") {
  remove_weight_norm(static_cast<Module&>(*module), name);
  return module;
}
/// spectral_norm on a holder; returns the holder.
template <class H, std::enable_if_t<is_module_holder_v<H>, int> = 0>
H spectral_norm(H module, const std::string& name = "weight", int64_t n_power_iterations = 1, double eps = 1e-12,
                std::optional<int64_t> dim = std::nullopt) {
  spectral_norm(static_cast<Module&>(*module), name, n_power_iterations, eps, dim);
  return module;
}
/// remove_spectral_norm on a holder; returns the holder.
template <class H, std::enable_if_t<is_module_holder_v<H>, int> = 0>
H remove_spectral_norm(H module, const std::string& name = "weight") {
  remove_spectral_norm(static_cast<Module&>(*module), name);
  return module;
}

}  // namespace vnn::nn::utils
