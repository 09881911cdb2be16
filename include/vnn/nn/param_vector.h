// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch.nn.utils.parameters_to_vector / vector_to_parameters.
#pragma once
#include <vector>

#include "vnn/tensor.h"

namespace vnn::nn::utils {

/// The parameters flattened and concatenated into one 1-D tensor (a copy; all on one device, else DeviceMismatch).
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);

/// Copies consecutive slices of the 1-D `vec` into the parameters (in place, no autograd); ShapeError when
/// vec is not 1-D or its length differs from the parameters' total element count.
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace vnn::nn::utils
