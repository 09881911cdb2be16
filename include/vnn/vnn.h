// The umbrella header: #include <vnn/vnn.h>
#pragma once
#include "vnn/device.h"
#include "vnn/dtype.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/memory.h"
#include "vnn/nn_ops.h"
#include "vnn/random.h"
#include "vnn/reduction.h"
#include "vnn/shape.h"
#include "vnn/tensor.h"
#include "vnn/version.h"
