# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes tests/nn/data/torchvision_resnet{50,101,152}_keys.txt: each
state_dict key of torchvision's model with its shape ("64x3x7x7"; empty for
a scalar), one per line, in torchvision's order. test_nn_resnet_zoo checks
that examples/resnet.hpp's models have exactly these keys and shapes, so a
torchvision checkpoint loads strictly.

    ~/.cache/vnn/torch2-venv/bin/pip install torchvision pillow
    ~/.cache/vnn/torch2-venv/bin/python tests/nn/export_torchvision_resnet_keys.py
"""
import os

import torchvision

here = os.path.dirname(os.path.abspath(__file__))
for name in ["resnet50", "resnet101", "resnet152"]:
    model = getattr(torchvision.models, name)()
    with open(os.path.join(here, "data", f"torchvision_{name}_keys.txt"), "w") as f:
        for key, value in model.state_dict().items():
            f.write(key + " " + "x".join(str(s) for s in value.shape) + "\n")
    print(name, len(model.state_dict()), "keys")
