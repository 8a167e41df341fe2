"""Helpers of tools/gpu-check: the machine's GPU facts, and the summary of the junit reports.

``python tools/gpu_check.py facts``: print CuPy's version, the GPUs, whether
dbr.gpu, cuDNN and NCCL are usable; exit 0 when a GPU is usable, else 3.

``python tools/gpu_check.py summary OUT_DIR [NOTE...]``: read ``OUT_DIR/*.xml``
(pytest junit files), write ``OUT_DIR/summary.txt`` with pass/fail/skip
counts per suite and the notes, print it, and exit 1 if a test failed or
errored, else 0.

``python tools/gpu_check.py run ...``: the whole check, every suite side by
side (see ``tools/gpu_check_run.py``).
"""

import pathlib
import sys
import xml.etree.ElementTree as ET


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


def _counts(path):
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        for key in total:
            total[key] += int(suite.get(key, 0))
    total["passed"] = total["tests"] - total["failures"] - total["errors"] - total["skipped"]
    return total


def summary(out_dir, notes):
    """Write and print ``out_dir/summary.txt``; return 1 if any test failed or errored."""
    out = pathlib.Path(out_dir)
    lines = [f"{'suite':<22}{'passed':>8}{'failed':>8}{'errors':>8}{'skipped':>9}"]
    bad = 0
    grand = {"passed": 0, "failures": 0, "errors": 0, "skipped": 0}
    for xml in sorted(out.glob("*.xml")):
        try:
            c = _counts(xml)
        except (ET.ParseError, OSError) as e:
            lines.append(f"{xml.stem:<22} unreadable junit file ({e})")
            bad = 1
            continue
        lines.append(
            f"{xml.stem:<22}{c['passed']:>8}{c['failures']:>8}{c['errors']:>8}{c['skipped']:>9}"
        )
        for key in grand:
            grand[key] += c[key]
        bad |= bool(c["failures"] or c["errors"])
    lines.append(
        f"{'TOTAL':<22}{grand['passed']:>8}{grand['failures']:>8}{grand['errors']:>8}"
        f"{grand['skipped']:>9}"
    )
    lines += notes
    lines.append("RESULT: " + ("FAILED" if bad else "ok"))
    text = "\n".join(lines) + "\n"
    (out / "summary.txt").write_text(text)
    print(text, end="")
    return int(bad)


def main(argv):
    if argv[:1] == ["facts"]:
        return facts()
    if argv[:1] == ["summary"] and len(argv) >= 2:
        return summary(argv[1], argv[2:])
    if argv[:1] == ["run"]:
        import gpu_check_run

        return gpu_check_run.main(argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
