# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Reference lr sequences for tests/optim/schedulers_more.cpp, from PyTorch:
#   ~/.cache/vnn/torch2-venv/bin/python tests/optim/schedulers_more_torch.py
# prints, per configuration, group 0's lr after construction and after each
# of 14 steps (and the momentum for CyclicLR), on SGD(lr=0.1, momentum=0.9).
import warnings

import torch
from torch.optim import lr_scheduler as L

warnings.filterwarnings("ignore")
STEPS = 14


def sgd():
    return torch.optim.SGD([torch.zeros(3, requires_grad=True)], lr=0.1, momentum=0.9)


def run(make, key="lr", step=None):
    opt = sgd()
    s = make(opt)
    out = [opt.param_groups[0][key]]
    for i in range(STEPS):
        opt.step()
        (step or (lambda s, i: s.step()))(s, i)
        out.append(opt.param_groups[0][key])
    return out


CONFIGS = [
    ("LambdaLR", lambda: run(lambda o: L.LambdaLR(o, lambda e: 0.95**e + 0.01 * e))),
    ("MultiplicativeLR", lambda: run(lambda o: L.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.8))),
    ("ConstantLR", lambda: run(lambda o: L.ConstantLR(o, factor=0.5, total_iters=4))),
    ("PolynomialLR", lambda: run(lambda o: L.PolynomialLR(o, total_iters=6, power=2.0))),
    ("CosineAnnealingWarmRestarts", lambda: run(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01))),
    ("CosineAnnealingWarmRestarts_epoch",
     lambda: run(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3, eta_min=0.001),
                 step=lambda s, i: s.step(0.75 * (i + 1)))),
    ("CyclicLR", lambda: run(lambda o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=2))),
    ("CyclicLR_momentum", lambda: run(lambda o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=2), key="momentum")),
    ("CyclicLR_triangular2", lambda: run(lambda o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="triangular2"))),
    ("CyclicLR_exp_range", lambda: run(lambda o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.9))),
    ("SequentialLR_warmup_cosine",
     lambda: run(lambda o: L.SequentialLR(o, [L.LinearLR(o, 0.1, 1.0, 3), L.CosineAnnealingLR(o, 5, 0.001)], [3]))),
    ("SequentialLR_three",
     lambda: run(lambda o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, 10), L.ExponentialLR(o, 0.8),
                                              L.StepLR(o, 2, 0.5)], [2, 6]))),
    ("ChainedScheduler",
     lambda: run(lambda o: L.ChainedScheduler([L.ConstantLR(o, 0.1, 3), L.ExponentialLR(o, 0.9)]))),
]

for name, f in CONFIGS:
    vals = ", ".join(f"{v:.17g}" for v in f())
    print(f'    {{"{name}", {{{vals}}}}},')
