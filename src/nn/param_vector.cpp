// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/nn/param_vector.h"

#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/indexing.h"

namespace vnn::nn::utils {

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  VNN_CHECK(ValueError, !parameters.empty(), "parameters_to_vector: got no parameters");
  std::vector<Tensor> flat;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Tensor& p = parameters[i];
    VNN_CHECK(ValueError, p.defined(), "parameters_to_vector: parameter ", i, " is undefined");
    VNN_CHECK(DeviceMismatch, p.device() == parameters[0].device(), "parameters_to_vector: parameter ", i, " is on ",
              p.device().str(), " but parameter 0 is on ", parameters[0].device().str(), "; move them to one device");
    flat.push_back(p.reshape({-1}));
  }
  return cat(flat, 0);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  int64_t total = 0;
  for (auto& p : parameters) total += p.numel();
  VNN_CHECK(ShapeError, vec.defined() && vec.dim() == 1 && vec.numel() == total,
            "vector_to_parameters: expected a 1-D vector of ", total, " elements (the parameters' count), got shape ",
            vec.defined() ? vec.shape_str() : std::string("undefined"));
  autograd::NoGradGuard no_grad;
  int64_t offset = 0;
  for (auto& p : parameters) {
    p.detach().copy_(vec.narrow(0, offset, p.numel()).reshape(p.sizes()));
    offset += p.numel();
  }
}

}  // namespace vnn::nn::utils
