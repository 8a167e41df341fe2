"""N-d convolutions and their gradients through cuDNN, with NVIDIA's cudnn-frontend bindings.

CuPy 14 no longer wraps cuDNN; this module reaches it through the
``nvidia-cudnn-frontend`` package (``import cudnn``, dbr-gpu's ``cudnn``
extra) and the cuDNN library it loads (the ``nvidia-cudnn-cu12``/``-cu13``
wheels, or a system install). Arrays are CuPy arrays in NCHW order (NCW,
NCDHW for 1-d and 3-d), made C-contiguous here; ``W`` is
``(out_channels, in_channels // groups, k_1, ..., k_n)``. One cuDNN graph is
built per operation, shapes, dtype, options and device, and cached; it runs
on CuPy's current stream with its workspace from CuPy's memory pool.
float16 convolutions compute in float32; float32 convolutions never run on
engines that round their inputs to TF32. With ``config.cudnn_deterministic``
only engines that give the same bits on every run are used (as in Chainer;
others may accumulate in a varying order).
"""

import functools
import glob
import importlib
import os
import threading

import numpy

from dbr.core import config
from dbr.gpu import _cupy

__all__ = [
    "CudnnNotSupportedError",
    "available",
    "convolution_backward_data",
    "convolution_backward_filter",
    "convolution_forward",
    "should_use_cudnn",
    "should_use_cudnn_tensor_core",
    "unavailable_reason",
    "version",
]

_DTYPES = ("float16", "float32", "float64")
_MODES = ("always", "auto", "never")


class CudnnNotSupportedError(RuntimeError):
    """No cuDNN engine supports this convolution (shapes, dtype, options); use the fallback."""


def _preload_library():
    # The frontend looks for libcudnn under nvidia/cudnn/lib of its own site-packages
    # and on the loader's path; a wheel elsewhere (nvidia/cu13/lib, another
    # site-packages on sys.path) is found once loaded by its soname.
    try:
        import nvidia
    except ImportError:
        return False
    import ctypes

    for root in getattr(nvidia, "__path__", ()):
        for path in sorted(glob.glob(os.path.join(root, "*", "lib", "libcudnn.so.*[0-9]"))):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return True
    return False


@functools.cache
def _probe():
    if not _cupy.available:
        return None, _cupy.unavailable_reason
    try:
        import cudnn
    except Exception as e:  # ImportError, or the extension failing to load
        return None, (
            f"the cudnn-frontend bindings cannot be imported ({type(e).__name__}: {e}); "
            "pip install 'dbr-gpu[cudnn]'"
        )
    try:
        cudnn.backend_version()
    except Exception:
        try:
            if _preload_library():
                cudnn = importlib.reload(cudnn)
            cudnn.backend_version()
        except Exception as e:
            return None, (
                f"cudnn-frontend {getattr(cudnn, '__version__', '?')} is installed but the cuDNN "
                f"library does not load ({type(e).__name__}: {e}); install nvidia-cudnn-cu13 "
                "(or -cu12) matching CuPy's CUDA"
            )
    return cudnn, None


def available():
    """True when cudnn-frontend imports, a GPU is usable and libcudnn loads; never raises."""
    try:
        return _probe()[0] is not None
    except Exception:
        return False


def unavailable_reason():
    """Why :func:`available` is False (str), or None when cuDNN can be used."""
    return _probe()[1]


def should_use_cudnn(level, dtype=None):
    """Whether to run a kernel through cuDNN, as Chainer's ``should_use_cudnn``.

    ``config.use_cudnn`` ``'always'`` answers True for both levels, ``'auto'``
    only for ``'>=auto'``, ``'never'`` False; always False when cuDNN is not
    :func:`available` or ``dtype`` is not float16/32/64.

    Args:
        level (str): ``'>=auto'`` or ``'==always'``.
        dtype: the arrays' dtype, or None to skip the dtype check.

    Raises:
        ValueError: an unknown ``level`` or ``config.use_cudnn`` value.
    """
    if level not in (">=auto", "==always"):
        raise ValueError(f"should_use_cudnn: level must be '>=auto' or '==always', got {level!r}")
    mode = config.use_cudnn
    if mode not in _MODES:
        raise ValueError(f"config.use_cudnn must be 'always', 'auto' or 'never', got {mode!r}")
    if mode == "never" or (mode == "auto" and level == "==always"):
        return False
    if dtype is not None and numpy.dtype(dtype).name not in _DTYPES:
        return False
    return available()


def version():
    """cuDNN's version as an int (``90100`` for 9.1.0), or -1 when cuDNN is not available."""
    cudnn = _probe()[0] if available() else None
    return -1 if cudnn is None else int(cudnn.backend_version())


_TENSOR_CORE_MODES = {"always": True, "auto": None, "never": False}


def should_use_cudnn_tensor_core(dtype):
    """Whether cuDNN may use Tensor Cores for ``dtype``, from ``config.use_cudnn_tensor_core``.

    ``'always'`` answers True and ``'never'`` False, as in Chainer; ``'auto'``
    answers True for float16 when cuDNN is :func:`available` on a GPU of
    compute capability 7.0 or later.

    Args:
        dtype: the arrays' dtype.

    Raises:
        ValueError: ``config.use_cudnn_tensor_core`` is not 'always', 'auto' or 'never'.
    """
    mode = config.use_cudnn_tensor_core
    if mode not in _TENSOR_CORE_MODES:
        raise ValueError(
            f"config.use_cudnn_tensor_core must be 'always', 'auto' or 'never', got {mode!r}"
        )
    if _TENSOR_CORE_MODES[mode] is not None:
        return _TENSOR_CORE_MODES[mode]
    if numpy.dtype(dtype) != numpy.float16 or not available():
        return False
    return int(_cupy.cupy.cuda.Device().compute_capability) >= 70


_local = threading.local()
_graphs = {}
_graphs_lock = threading.Lock()


def _handle(cudnn, device_id):
    handles = getattr(_local, "handles", None)
    if handles is None:
        handles = _local.handles = {}
    handle = handles.get(device_id)
    if handle is None:
        handle = handles[device_id] = cudnn.create_handle()
    return handle


def _strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return list(reversed(strides))


def _tuple(value, n, what):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"{what} must have {n} entries for a {n}-d convolution, got {value}")
    return value


def _options(x_shape, w_shape, stride, pad, dilate, groups):
    n = len(x_shape) - 2
    if n < 1 or len(w_shape) != n + 2:
        raise ValueError(
            f"x {tuple(x_shape)} and W {tuple(w_shape)} do not make an N-d convolution"
        )
    if w_shape[1] * groups != x_shape[1] or w_shape[0] % groups:
        raise ValueError(
            f"W {tuple(w_shape)} does not fit x {tuple(x_shape)} with groups={groups}: "
            "W must be (out_channels, in_channels // groups, *kernel)"
        )
    return _tuple(stride, n, "stride"), _tuple(pad, n, "pad"), _tuple(dilate, n, "dilate")


def _out_shape(x_shape, w_shape, stride, pad, dilate):
    spatial = [
        (size + 2 * p - (k - 1) * d - 1) // s + 1
        for size, k, s, p, d in zip(x_shape[2:], w_shape[2:], stride, pad, dilate)
    ]
    return (x_shape[0], w_shape[0], *spatial)


def _build(cudnn, handle, op, shapes, dtype, stride, pad, dilate, deterministic):
    io = {
        "float16": cudnn.data_type.HALF,
        "float32": cudnn.data_type.FLOAT,
        "float64": cudnn.data_type.DOUBLE,
    }[dtype]
    compute = cudnn.data_type.DOUBLE if dtype == "float64" else cudnn.data_type.FLOAT
    graph = cudnn.pygraph(
        io_data_type=io, intermediate_data_type=compute, compute_data_type=compute, handle=handle
    )
    a_shape, b_shape, out_shape = shapes
    a = graph.tensor(name="a", dim=list(a_shape), stride=_strides(a_shape), data_type=io)
    b = graph.tensor(name="b", dim=list(b_shape), stride=_strides(b_shape), data_type=io)
    conv = {"fprop": graph.conv_fprop, "dgrad": graph.conv_dgrad, "wgrad": graph.conv_wgrad}[op]
    out = conv(
        a,
        b,
        padding=list(pad),
        stride=list(stride),
        dilation=list(dilate),
        compute_data_type=compute,
        name=op,
    )
    out.set_output(True).set_dim(list(out_shape)).set_stride(_strides(out_shape))
    out.set_data_type(io)
    try:
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        excluded = []
        if dtype == "float32":
            # Tensor-core engines compute float32 convolutions in TF32 (10-bit
            # mantissas): off, as in Chainer and in PyTorch with allow_tf32 False.
            excluded += [
                cudnn.numerical_note.TENSOR_CORE,
                cudnn.numerical_note.DOWN_CONVERT_INPUTS,
            ]
        if deterministic:
            excluded.append(cudnn.numerical_note.NONDETERMINISTIC)
        if excluded:
            graph.deselect_numeric_notes(excluded)
        graph.check_support()
        graph.build_plans()
    except Exception as e:
        raise CudnnNotSupportedError(
            f"cuDNN has no engine for conv {op} of {a_shape} and {b_shape} -> {out_shape} "
            f"({dtype}, stride={stride}, pad={pad}, dilate={dilate}): {type(e).__name__}: {e}"
        ) from e
    return graph, (a.uid, b.uid, out.uid), graph.get_workspace_size()


_DTYPE_NAMES = {numpy.dtype(name): name for name in _DTYPES}


def _run(op, a, b, out_shape, stride, pad, dilate):
    cudnn, reason = _probe()
    if cudnn is None:
        raise RuntimeError(f"dbr.gpu.cudnn convolution {op}: cuDNN is not available: {reason}")
    dtype = _DTYPE_NAMES.get(a.dtype)
    if dtype is None or b.dtype != a.dtype:
        raise TypeError(
            f"cuDNN convolution {op}: dtypes {a.dtype}, {b.dtype}; expected float16/32/64"
        )
    cupy = _cupy.cupy
    device = a.device
    # Entering a Device costs two runtime calls; the arrays are nearly always on the current one.
    if device.id == cupy.cuda.runtime.getDevice():
        return _launch(cudnn, cupy, op, a, b, out_shape, dtype, stride, pad, dilate, device.id)
    with device:
        return _launch(cudnn, cupy, op, a, b, out_shape, dtype, stride, pad, dilate, device.id)


def _launch(cudnn, cupy, op, a, b, out_shape, dtype, stride, pad, dilate, device_id):
    """Run the cached graph of ``op`` on the current device; return the new output array."""
    if not a.flags.c_contiguous:
        a = cupy.ascontiguousarray(a)
    if not b.flags.c_contiguous:
        b = cupy.ascontiguousarray(b)
    handle = _handle(cudnn, device_id)
    deterministic = bool(config.cudnn_deterministic)
    key = (op, a.shape, b.shape, out_shape, dtype, stride, pad, dilate, deterministic, device_id)
    built = _graphs.get(key)
    if built is None:
        with _graphs_lock:
            built = _graphs.get(key)
            if built is None:
                shapes = (a.shape, b.shape, out_shape)
                try:
                    built = _build(
                        cudnn, handle, op, shapes, dtype, stride, pad, dilate, deterministic
                    )
                except CudnnNotSupportedError as e:
                    built = e
                _graphs[key] = built
    if isinstance(built, CudnnNotSupportedError):
        raise built
    graph, uids, workspace_size = built
    out = cupy.empty(out_shape, dtype=a.dtype)
    # A workspace per call, back to the pool at once: one kept between calls would hold
    # the largest engine's (hundreds of MiB with FFT engines) for the process's life.
    workspace = cupy.empty(max(workspace_size, 1), dtype=numpy.uint8)
    cudnn.set_stream(handle=handle, stream=cupy.cuda.get_current_stream().ptr)
    # The ordered form (buffers in the order of their uids) skips the frontend's
    # mapping normalisation on every call.
    graph.execute(
        (a.data.ptr, b.data.ptr, out.data.ptr), workspace.data.ptr, handle=handle, tensor_uids=uids
    )
    return out


def convolution_forward(x, W, b, stride, pad, dilate, groups):
    """N-d convolution ``y = conv(x, W) + b`` (cross-correlation, as Chainer's).

    Args:
        x: CuPy array ``(N, C, *in_size)``, float16/32/64.
        W: ``(O, C // groups, *k)`` of x's dtype.
        b: ``(O,)`` or None.
        stride, pad, dilate: ints or one per spatial axis (symmetric padding).
        groups (int): channel groups.

    Returns:
        CuPy array ``(N, O, *out_size)``, each
        ``out = (in + 2 pad - (k - 1) dilate - 1) // stride + 1``.

    Raises:
        CudnnNotSupportedError: no cuDNN engine takes this convolution.
    """
    stride, pad, dilate = _options(x.shape, W.shape, stride, pad, dilate, groups)
    y_shape = _out_shape(x.shape, W.shape, stride, pad, dilate)
    y = _run("fprop", x, W, y_shape, stride, pad, dilate)
    if b is not None:
        y += b.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y


def convolution_backward_data(W, gy, x_shape, stride, pad, dilate, groups):
    """The gradient of :func:`convolution_forward` with respect to ``x``.

    Args:
        W: CuPy array ``(O, C // groups, *k)``.
        gy: ``(N, O, *out_size)`` of W's dtype.
        x_shape (tuple): ``(N, C, *in_size)``, the input's shape.
        stride, pad, dilate, groups: as in the forward.

    Returns:
        CuPy array of shape ``x_shape``.
    """
    x_shape = tuple(int(s) for s in x_shape)
    stride, pad, dilate = _options(x_shape, W.shape, stride, pad, dilate, groups)
    return _run("dgrad", gy, W, x_shape, stride, pad, dilate)


def convolution_backward_filter(x, gy, W_shape, stride, pad, dilate, groups):
    """The gradient of :func:`convolution_forward` with respect to ``W``.

    Args:
        x: CuPy array ``(N, C, *in_size)``.
        gy: ``(N, O, *out_size)`` of x's dtype.
        W_shape (tuple): ``(O, C // groups, *k)``, the filter's shape.
        stride, pad, dilate, groups: as in the forward.

    Returns:
        CuPy array of shape ``W_shape``.
    """
    W_shape = tuple(int(s) for s in W_shape)
    stride, pad, dilate = _options(x.shape, W_shape, stride, pad, dilate, groups)
    return _run("wgrad", x, gy, W_shape, stride, pad, dilate)
