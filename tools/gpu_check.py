"""Helper of tools/gpu-check: the machine's GPU facts.

``python tools/gpu_check.py facts``: print CuPy's version, the GPUs, whether
dbr.gpu, cuDNN and NCCL are usable; exit 0 when a GPU is usable, else 3.
tools/gpu_check_run.py runs it first and writes the summary itself.
"""

import sys


def _fact(label, compute):
    try:
        value = compute()
    except Exception as e:  # every fact is optional; say why it is missing
        value = f"unknown ({type(e).__name__}: {e})"
    print(f"{label}: {value}")
    return value


def facts():
    """Print what the machine offers; return 0 when a GPU is usable through dbr.gpu, else 3."""
    import importlib

    import numpy

    print(f"python: {sys.version.split()[0]}, numpy {numpy.__version__}")
    gpu = importlib.import_module("dbr.gpu")
    cupy = gpu.cupy
    print(f"cupy: {cupy.__version__ if cupy is not None else 'not installed'}")
    print(f"dbr.gpu.available: {gpu.available}")
    if not gpu.available:
        print(f"NO GPU: {gpu.unavailable_reason}")
        return 3

    def gpus():
        names = []
        for i in range(cupy.cuda.runtime.getDeviceCount()):
            props = cupy.cuda.runtime.getDeviceProperties(i)
            name = props["name"]
            name = name.decode() if isinstance(name, bytes) else name
            names.append(f"{i}: {name}, {props['totalGlobalMem'] / 2**30:.1f} GiB")
        return "; ".join(names)

    _fact("gpus", gpus)
    _fact("cuda runtime", lambda: cupy.cuda.runtime.runtimeGetVersion())
    _fact("cuda driver", lambda: cupy.cuda.runtime.driverGetVersion())
    _fact("cudnn available", lambda: importlib.import_module("dbr.gpu.cudnn").available())
    _fact("nccl available", lambda: importlib.import_module("dbr.gpu.nccl").available())
    return 0


def main(argv):
    if argv[:1] == ["facts"]:
        return facts()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
