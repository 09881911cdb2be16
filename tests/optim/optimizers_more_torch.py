# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Reference trajectories for tests/optim/optimizers_more.cpp, from PyTorch:
#   ~/.cache/vnn/torch2-venv/bin/python tests/optim/optimizers_more_torch.py
# prints, per configuration, the float64 parameter after each of 8 steps on
#   loss(p) = sum(w * (p - t)^2) + sum(cos(3 p)) / 6
# (gradient 2 w (p - t) - sin(3 p) / 2), the C++ test's problem.
import torch

# PyTorch keeps scalar state (NAdam's mu_product, ASGD's eta and mu, the step)
# in the default dtype; float64 here, as vnn keeps them as host doubles.
torch.set_default_dtype(torch.float64)

P0 = [0.8, -1.2, 0.3, 2.0]
W = [1.0, 3.0, 0.5, 2.0]
T = [0.1, 0.4, -0.7, 1.5]
STEPS = 8


def trajectory(make, steps=STEPS):
    p = torch.tensor(P0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(W, dtype=torch.float64)
    t = torch.tensor(T, dtype=torch.float64)
    opt = make([p])
    rows = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (w * (p - t) ** 2).sum() + torch.cos(3 * p).sum() / 6
        loss.backward()
        opt.step()
        rows.append([float(v) for v in p.detach()])
    return rows


CONFIGS = [
    ("Adamax", lambda ps: torch.optim.Adamax(ps, lr=0.1)),
    ("Adamax_wd_max", lambda ps: torch.optim.Adamax(ps, lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, maximize=True)),
    ("NAdam", lambda ps: torch.optim.NAdam(ps, lr=0.1)),
    ("NAdam_wd", lambda ps: torch.optim.NAdam(ps, lr=0.1, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam_decoupled", lambda ps: torch.optim.NAdam(ps, lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", lambda ps: torch.optim.RAdam(ps, lr=0.1, betas=(0.9, 0.9))),
    ("RAdam_wd", lambda ps: torch.optim.RAdam(ps, lr=0.1, betas=(0.9, 0.9), weight_decay=0.1)),
    ("RAdam_decoupled", lambda ps: torch.optim.RAdam(ps, lr=0.1, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adadelta", lambda ps: torch.optim.Adadelta(ps)),
    ("Adadelta_wd", lambda ps: torch.optim.Adadelta(ps, lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    ("ASGD", lambda ps: torch.optim.ASGD(ps, lr=0.1, t0=3)),
    ("ASGD_wd", lambda ps: torch.optim.ASGD(ps, lr=0.05, lambd=0.01, alpha=0.5, t0=0, weight_decay=0.1, maximize=True)),
    ("Rprop", lambda ps: torch.optim.Rprop(ps, lr=0.1)),
    ("Rprop_bounds", lambda ps: torch.optim.Rprop(ps, lr=0.3, etas=(0.3, 1.5), step_sizes=(0.05, 0.4))),
    ("LBFGS", None),
    ("LBFGS_wolfe", None),
]


def lbfgs(line_search, steps=3):
    p = torch.tensor(P0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(W, dtype=torch.float64)
    t = torch.tensor(T, dtype=torch.float64)
    opt = torch.optim.LBFGS([p], lr=0.5 if line_search is None else 1, max_iter=4, history_size=3,
                            line_search_fn=line_search)

    def closure():
        opt.zero_grad()
        loss = (w * (p - t) ** 2).sum() + torch.cos(3 * p).sum() / 6
        loss.backward()
        return loss

    rows = []
    for _ in range(steps):
        opt.step(closure)
        rows.append([float(v) for v in p.detach()])
    return rows


def emit(name, rows):
    body = ",\n      ".join("{" + ", ".join(f"{v:.17g}" for v in r) + "}" for r in rows)
    print(f'    {{"{name}",\n     {{{body}}}}},')


for name, make in CONFIGS:
    if name == "LBFGS":
        emit(name, lbfgs(None))
    elif name == "LBFGS_wolfe":
        emit(name, lbfgs("strong_wolfe"))
    else:
        emit(name, trajectory(make))
