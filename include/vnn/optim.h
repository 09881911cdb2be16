// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The umbrella header of vnn::optim: optimizers, gradient clipping and
// learning-rate schedulers.
#pragma once
#include "vnn/optim/clip.h"
#include "vnn/nn/param_vector.h"
#include "vnn/optim/optimizer.h"
#include "vnn/optim/optimizers.h"
#include "vnn/optim/optimizers_adaptive.h"
#include "vnn/optim/optimizers_classic.h"
#include "vnn/optim/lbfgs.h"
#include "vnn/optim/scheduler.h"
#include "vnn/optim/scheduler_more.h"
