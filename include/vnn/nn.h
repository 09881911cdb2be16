// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Everything of vnn::nn: #include <vnn/nn.h>
#pragma once
#include "vnn/nn/activation.h"
#include "vnn/nn/container.h"
#include "vnn/nn/conv.h"
#include "vnn/nn/conv1d.h"
#include "vnn/nn/functional.h"
#include "vnn/nn/init.h"
#include "vnn/nn/layers.h"
#include "vnn/nn/module.h"
#include "vnn/nn/normalization.h"
#include "vnn/nn/padding.h"
#include "vnn/nn/rms_norm.h"
#include "vnn/nn/rnn.h"
#include "vnn/nn/upsampling.h"
#include "vnn/nn/loss.h"
#include "vnn/nn/loss_more.h"
#include "vnn/nn/transformer.h"
