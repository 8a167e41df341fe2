"""Host microseconds per call of the GPU primitives under dbr's hot paths.

The GPU benchmarks (benchmarks/gpu.py) are bound by the host on small models:
Python issues the work slower than the GPU runs it. This script measures what
each primitive costs the host, on shapes from those models, so that a change to
a hot path can pick the cheapest spelling: CuPy's matmul against dot and
cuBLAS gemm, elementwise spellings, allocation, reductions, and a cuDNN
convolution through cudnn-frontend's mapping ``execute`` against its ordered
(``tensor_uids``) form.

Run on a CUDA machine from a checkout (``packages/*/src`` on ``PYTHONPATH``)::

    python3 benchmarks/gpu_overhead.py [--calls 400] [--out report.md]

Each figure is the median over 5 repeats of ``--calls`` calls timed without a
synchronisation inside the loop (the host's issue time; the GPU catches up
after each repeat).
"""

import argparse
import statistics
import time

import numpy


def host_us(fn, calls, repeats=5):
    """Median host microseconds per call of ``fn`` over ``repeats`` loops of ``calls``."""
    import cupy

    for _ in range(20):
        fn()
    cupy.cuda.Device().synchronize()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
        cupy.cuda.Device().synchronize()
    return statistics.median(samples)


def matmul_cases(cupy):
    """Spellings of the LSTM's (20, 650) x (650, 2600) product."""
    rng = numpy.random.default_rng(0)
    a = cupy.asarray(rng.standard_normal((20, 650), numpy.float32))
    b = cupy.asarray(rng.standard_normal((650, 2600), numpy.float32))
    out = cupy.empty((20, 2600), numpy.float32)
    from cupy import cublas

    reference = (a @ b).get()
    numpy.testing.assert_allclose(cupy.dot(a, b).get(), reference, rtol=1e-5, atol=1e-4)
    gemm = cublas.gemm("N", "N", a, b).get()
    numpy.testing.assert_allclose(gemm, reference, rtol=1e-5, atol=1e-4)
    return {
        "a @ b": lambda: a @ b,
        "cupy.dot(a, b)": lambda: cupy.dot(a, b),
        "cupy.dot(a, b, out=out)": lambda: cupy.dot(a, b, out=out),
        "cublas.gemm('N', 'N', a, b)": lambda: cublas.gemm("N", "N", a, b),
        "cublas.gemm(..., out=out)": lambda: cublas.gemm("N", "N", a, b, out=out),
    }


def elementwise_cases(cupy):
    """Elementwise spellings and allocation on the LSTM's (20, 650) state."""
    x = cupy.ones((20, 650), numpy.float32)
    y = cupy.ones((20, 650), numpy.float32)
    out = cupy.empty_like(x)
    return {
        "x + y": lambda: x + y,
        "cupy.add(x, y, out=out)": lambda: cupy.add(x, y, out=out),
        "out += y": lambda: out.__iadd__(y),
        "cupy.empty((20, 650), float32)": lambda: cupy.empty((20, 650), numpy.float32),
        "cupy.empty_like(x)": lambda: cupy.empty_like(x),
        "x.sum(axis=0)": lambda: x.sum(axis=0),
        "x.astype(float32, copy=False)": lambda: x.astype(numpy.float32, copy=False),
        "x.reshape(650, 20)": lambda: x.reshape(650, 20),
    }


def cudnn_cases(cupy):
    """LeNet-5's first convolution through dbr.gpu.cudnn, mapping and ordered execute."""
    from dbr.gpu import cudnn as dbr_cudnn

    library, reason = dbr_cudnn._probe()
    if library is None:
        print(f"cuDNN cases skipped: {reason}")
        return {}
    rng = numpy.random.default_rng(0)
    x = cupy.asarray(rng.standard_normal((128, 1, 28, 28), numpy.float32))
    w = cupy.asarray(rng.standard_normal((20, 1, 5, 5), numpy.float32))
    args = ((1, 1), (0, 0), (1, 1))
    y_shape = (128, 20, 24, 24)
    reference = dbr_cudnn._run("fprop", x, w, y_shape, *args).get()
    key = next(k for k in dbr_cudnn._graphs if k[0] == "fprop" and k[1] == x.shape)
    graph, uids, ws_size = dbr_cudnn._graphs[key]
    handle = dbr_cudnn._handle(library, 0)
    stream = cupy.cuda.get_current_stream().ptr
    workspace = cupy.empty(max(ws_size, 1), numpy.uint8)
    out = cupy.empty(y_shape, numpy.float32)
    # The graph's Tensors in uid order (dbr caches only their uids); the uids
    # themselves key the mapping form just as well.
    tensors = dict.fromkeys(uids)

    def mapping():
        pointers = (x.data.ptr, w.data.ptr, out.data.ptr)
        graph.execute(dict(zip(tensors, pointers)), workspace.data.ptr, handle=handle)

    def ordered():
        graph.execute(
            (x.data.ptr, w.data.ptr, out.data.ptr),
            workspace.data.ptr,
            handle=handle,
            tensor_uids=uids,
        )

    out.fill(0)
    mapping()
    numpy.testing.assert_array_equal(out.get(), reference)
    print(f"the mapping execute matches dbr's ordered one (uids {uids})")
    from dbr.core import config

    def enter_device():
        with x.device:
            pass

    return {
        "dbr.gpu.cudnn._run('fprop', ...)": lambda: dbr_cudnn._run("fprop", x, w, y_shape, *args),
        "graph.execute(mapping)": mapping,
        "graph.execute(tuple, tensor_uids=...)": ordered,
        "cudnn.set_stream(handle, stream)": lambda: library.set_stream(
            handle=handle, stream=stream
        ),
        "with x.device: pass": enter_device,
        "cupy.ascontiguousarray(x)": lambda: cupy.ascontiguousarray(x),
        "x.flags.c_contiguous": lambda: x.flags.c_contiguous,
        "config.cudnn_deterministic": lambda: config.cudnn_deterministic,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per timed loop")
    parser.add_argument("--out", help="also write the table to this Markdown file")
    args = parser.parse_args(argv)
    import cupy

    rows = []
    for group in (matmul_cases, elementwise_cases, cudnn_cases):
        for name, fn in group(cupy).items():
            rows.append((group.__name__.split("_")[0], name, host_us(fn, args.calls)))
    lines = ["| group | call | host µs per call |", "|---|---|--:|"]
    lines += [f"| {group} | `{name}` | {us:.1f} |" for group, name, us in rows]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
