// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C interface between train_bench and its LibTorch module
// (train_bench_torch.cpp, dlopened at run time; see there for why).
#pragma once
#include <cstdint>
#include <ctime>

extern "C" {

struct TorchData {
  const float* train_x;  // normalised images [n_train, 1, 28, 28]
  const int64_t* train_y;
  int64_t n_train;
  const float* test_x;
  const int64_t* test_y;
  int64_t n_test;
  const int64_t* order;  // sample order shared with the vnn run
  int64_t n_order;
};

// CPU seconds of the whole process: stable on a shared machine where wall
// time is not (with 1 OpenMP thread it is exactly the training's work).
static inline double vnn_tb_cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// The phases of one step that --breakdown times, in order.
enum { kTbPhases = 6 };
static const char* const kTbPhaseNames[kTbPhases] = {"gather (index_select)", "zero_grad", "forward",
                                                     "cross_entropy", "backward", "optimizer step"};

struct TorchResult {
  double samples_per_s, accuracy, peak_mib, rss_mib, loss;
  double cpu_samples_per_s;   // samples per CPU second of the process (all threads)
  double phase_s[kTbPhases];  // with breakdown: seconds per phase, summed over the batches
};

// Sets LibTorch's thread count; returns its version.
typedef const char* (*vnn_tb_torch_version_fn)(int threads);
// Seconds per call of train_bench's op `kind` (0: a.add_(b), 1: permute
// copy, 2: a + b, 3: 2-D transpose copy).
typedef double (*vnn_tb_torch_op_fn)(int kind, const int64_t* a, int na, const int64_t* b, int nb, int inner);
typedef double (*vnn_tb_torch_tiny_step_fn)(int inner);
// Wall seconds per optimizer step over parameters of the given numels (kind
// 0: Adam lr 1e-3, 1: AdamW lr 1e-3 weight decay 1e-2, 2: SGD lr 1e-2
// momentum 0.9); *cpu_s: process CPU seconds per step.
typedef double (*vnn_tb_torch_optim_fn)(int kind, const int64_t* numels, int n, int inner, double* cpu_s);
// --only example: the quick start's CNN (examples/train_fashion_mnist.cpp:
// padded convs, BatchNorm after each pooling, 1cycle, random flips) trained
// by both sides on the same batches with the same lr / beta1 per step.
typedef void (*vnn_tb_batch_fn)(void* ctx, int64_t step, float* x, int64_t* y, int64_t* n);
struct TorchExample {
  int epochs;
  int64_t steps_per_epoch, batch;
  vnn_tb_batch_fn next_batch;  // fills batch `step` (x: [n, 1, 28, 28] in [0, 1])
  void* ctx;
  const double* lr;     // per step, as vnn's OneCycleLR set it
  const double* beta1;  // per step (cycled momentum)
  const float* test_x;  // [n_test, 1, 28, 28] in [0, 1]
  const int64_t* test_y;
  int64_t n_test;
};
// Test accuracy after each epoch into acc[epochs], seconds per epoch into secs.
typedef void (*vnn_tb_torch_example_fn)(const TorchExample* e, double* acc, double* secs);
// breakdown != 0: times each phase of the step into r->phase_s.
typedef void (*vnn_tb_torch_train_fn)(int cnn, const TorchData* d, int64_t batches, int breakdown, TorchResult* r);
}
