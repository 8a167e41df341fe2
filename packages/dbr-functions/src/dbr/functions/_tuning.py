"""The CPU tuning of dbr.functions: each size threshold, with the measurement that set it.

Everything here only chooses how NumPy work is split (into blocks, over
threads, into several matrix products); results differ at most by float
rounding (the elementwise splits not at all). Figures are from the 2-core
x86-64 development machine (AVX-512, OpenBLAS), float32, as measured when
each threshold was introduced; re-measure before changing one. The modules
using a threshold read it from here when they run, so a test can lower it;
only relu, sigmoid and tanh bind MIN_PARALLEL_SIZE at import, on their hot path.
"""

import numpy

# -- elementwise passes (dbr.functions._cpu.blockwise) ---------------------------------
# Issue 21 (float32 tanh, 2 threads): splitting a ufunc over two threads loses at
# 262k elements (42 -> 84 us: the hand-off costs about as much as the pass) and
# wins at 4M (710 -> 413 us).
MIN_PARALLEL_SIZE = 1 << 20
"""Elements from which an elementwise pass is split over ``config.cpu_threads`` threads."""

# Issue 21: blocks of 64k elements (256 KiB of float32) keep a chain of passes inside
# a core's L2 cache: sigmoid's four passes on (2048, 2048) float32 take 6.7 ms
# instead of 8.7 ms at 1 thread.
CACHE_BLOCK_SIZE = 1 << 16
"""Elements per block when a chain of elementwise passes runs block by block."""

# -- convolution windows and batches (dbr.functions.connection._im2col) -----------------
# Window copies and sums gather and scatter with short strided runs, several times
# the work of a plain pass per element: worth a thread from fewer elements (no
# figure was recorded when it was set).
WINDOW_PARALLEL_SIZE = 1 << 18
"""Elements of columns from which im2col and col2im are split over threads."""

# Issue 4: one im2col and one matrix product per block of the batch whose columns
# stay in the cache is faster than one of each over the whole batch, whose columns
# make a round trip through main memory (no figure was recorded when it was set).
CONV_BATCH_BLOCK_BYTES = 1 << 22
"""Bytes of im2col columns per block of the batch on the CPU."""

# Filter gradient of an ungrouped convolution: LeNet-5 (batch 64) second convolution,
# 50 x 500 x 64 = 1.6e6 multiply-adds per example, takes 4.7 instead of 5.0 ms at one
# thread and 3.6-3.8 instead of 4.8-4.9 ms at two as one product over the block
# (OpenBLAS threads it, and no per-example products are summed); the first, 20 x 25 x
# 576 = 2.9e5, stays per example, where OpenBLAS's small-matrix kernels are faster.
FILTER_GRAD_ONE_PRODUCT_MIN = 1_000_000
"""Multiply-adds per example above which a filter gradient is one product over the batch."""

# -- recurrent step products (dbr.functions.rnn._n_step.StepProducts) ---------------------
# OpenBLAS multiplies float32 matrices of at most about 1e6 multiply-adds (M * N * K)
# with its small-matrix kernels on AVX-512 CPUs, which read the operands in place
# instead of packing them first. A step's product of a few rows by the recurrent
# weight is over that size, and packing the weight every step costs more than the
# multiplication: (20, 256) by (256, 1024) takes 140 us in one product and 108 us
# as eight products of 128 columns; the backward (20, 1024) by (1024, 256), 138 us
# in one and 111 us as a sum of eight over 128-row slices (1 thread).
SMALL_PRODUCT_MAX = 1_000_000
"""The most multiply-adds (M * N * K) OpenBLAS's small-matrix kernels take."""

STEP_PRODUCT_BLOCKS = (128, 64)
"""Widths of the weight's column (row) blocks a step's products are split into, widest first."""


def has_small_matrix_kernels():
    """Whether NumPy's BLAS is OpenBLAS on a CPU with AVX-512 (its small-matrix kernels)."""
    try:
        blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:  # noqa: BLE001 - no build information: assume nothing
        return False
    core = getattr(numpy, "_core", None) or getattr(numpy, "core", None)
    features = getattr(getattr(core, "_multiarray_umath", None), "__cpu_features__", {})
    return "openblas" in str(blas).lower() and bool(features.get("AVX512_SKX"))


SMALL_MATRIX_KERNELS = has_small_matrix_kernels()
""":func:`has_small_matrix_kernels` for this process, found once at import."""
