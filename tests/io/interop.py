# Cross-checks vnn's safetensors files with Python's safetensors or torch.
# usage: interop.py check <vnn-written file> | write <file to write>
import sys
try:
    import torch
    from safetensors.torch import load_file, save_file  # noqa
    mode = "safetensors.torch"
except ImportError:
    try:
        import torch
        mode = None
    except ImportError:
        torch = None
        mode = None
    try:
        from safetensors.numpy import load_file, save_file
        import numpy as np
        mode = mode or "safetensors.numpy"
    except ImportError:
        if mode is None:
            print("skip: neither safetensors nor torch is importable")
            sys.exit(77)
if mode is None:
    print("skip: torch found but no safetensors module to read the format")
    sys.exit(77)
what, path = sys.argv[1], sys.argv[2]
if what == "check":
    t = load_file(path)
    a = t["a"]
    assert list(a.shape) == [2, 3], a.shape
    assert [float(x) for x in a.reshape(-1).tolist()] == [0, 1, 2, 3, 4, 5]
    assert [int(x) for x in t["i"].reshape(-1).tolist()] == [-1, 1 << 40]
    print(mode, "read the vnn file")
else:
    if mode == "safetensors.torch":
        save_file({"x": torch.arange(6, dtype=torch.float64).reshape(3, 2), "y": torch.tensor([7, -8], dtype=torch.int32)}, path, metadata={"from": "python"})
    else:
        save_file({"x": np.arange(6, dtype=np.float64).reshape(3, 2), "y": np.array([7, -8], dtype=np.int32)}, path, metadata={"from": "python"})
    print(mode, "wrote", path)
