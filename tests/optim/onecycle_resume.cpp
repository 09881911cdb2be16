// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OneCycleLR restored from a state saved with another total_steps follows
// the saved schedule (its phase ends come from the restored total, not the
// constructor's), as a resumed training run needs.
#include <catch2/catch.hpp>

#include "support/device_under_test.hpp"
#include "vnn/optim.h"

using namespace vnn;
namespace opt = vnn::optim;

TEST_CASE("OneCycleLR loaded from another total_steps continues the saved schedule") {
  Tensor p = zeros({3}, TensorOptions(vnn::test::device_under_test())).requires_grad_();
  opt::Adam a_opt({p}, opt::AdamOptions(1e-3));
  opt::OneCycleOptions long_run;
  long_run.total_steps = 100;
  opt::OneCycleLR a(a_opt, 0.01, long_run);
  for (int i = 0; i < 40; ++i) a.step();
  StateDict saved = a.state_dict();
  std::vector<double> want;
  for (int i = 0; i < 60; ++i) {
    a.step();
    want.push_back(a_opt.param_groups()[0].lr());
  }

  opt::Adam b_opt({p}, opt::AdamOptions(1e-3));
  opt::OneCycleOptions short_run;
  short_run.total_steps = 10;  // another horizon: phases end at 2 and 9
  opt::OneCycleLR b(b_opt, 0.01, short_run);
  b.load_state_dict(saved);
  for (size_t i = 0; i < want.size(); ++i) {
    b.step();
    INFO("step " << 41 + i);
    CHECK(b_opt.param_groups()[0].lr() == Approx(want[i]).epsilon(1e-12));
  }
  CHECK_THROWS_AS(b.step(), ValueError);  // past the restored 100 steps
}
