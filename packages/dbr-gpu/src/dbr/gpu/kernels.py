"""Cached builders of CuPy kernels, and a check that a kernel definition compiles.

:func:`elementwise`, :func:`reduce` and :func:`raw` return one CuPy kernel
object per distinct definition: a second call with the same arguments returns
the object built by the first, so CuPy's own per-object cache (one binary per
dtype signature, also kept on disk under ``CUPY_CACHE_DIR``) is reused and
nothing is recompiled. :func:`compile_count` counts the objects built.

:func:`check_compiles` compiles a definition with NVRTC against CuPy's
headers, without a GPU, so that CI can reject a kernel string with a typo.
"""

import threading

import numpy

from dbr.gpu import _cupy

__all__ = [
    "CompileError",
    "check_compiles",
    "compile_count",
    "elementwise",
    "from_definition",
    "raw",
    "reduce",
]

_kernels = {}
_lock = threading.Lock()
_built = 0


def _cached(key, who, build):
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    cupy = _cupy.require(who)
    global _built
    with _lock:
        kernel = _kernels.get(key)
        if kernel is None:
            kernel = build(cupy)
            _kernels[key] = kernel
            _built += 1
    return kernel


def elementwise(
    in_params,
    out_params,
    operation,
    name,
    *,
    preamble="",
    loop_prep="",
    after_loop="",
    reduce_dims=True,
    no_return=False,
    return_tuple=False,
):
    """The ``cupy.ElementwiseKernel`` for this definition, built once and cached.

    Args:
        in_params (str): input parameters, e.g. ``"T x, raw T w, float32 alpha"``.
        out_params (str): output parameters, e.g. ``"T y"``.
        operation (str): CUDA C++ run for each index ``i``.
        name (str): the kernel's name (dbr's start with ``dbr_``).
        preamble, loop_prep, after_loop (str): code before the kernel, before
            the loop and after it, as in CuPy.
        reduce_dims, no_return, return_tuple (bool): as in CuPy.

    Returns:
        cupy.ElementwiseKernel: the same object for the same arguments.

    Raises:
        RuntimeError: CuPy or a GPU is missing (see :func:`dbr.gpu.require`).
    """
    key = (
        "elementwise",
        in_params,
        out_params,
        operation,
        name,
        preamble,
        loop_prep,
        after_loop,
        reduce_dims,
        no_return,
        return_tuple,
    )
    return _cached(
        key,
        f"dbr.gpu.elementwise({name!r})",
        lambda cupy: cupy.ElementwiseKernel(
            in_params,
            out_params,
            operation,
            name=name,
            reduce_dims=reduce_dims,
            preamble=preamble,
            no_return=no_return,
            return_tuple=return_tuple,
            loop_prep=loop_prep,
            after_loop=after_loop,
        ),
    )


def reduce(
    in_params,
    out_params,
    map_expr,
    reduce_expr,
    post_map_expr,
    identity,
    name,
    *,
    reduce_type=None,
    preamble="",
):
    """The ``cupy.ReductionKernel`` for this definition, built once and cached.

    Args:
        in_params (str): input parameters, e.g. ``"T x"``.
        out_params (str): output parameters, e.g. ``"T y"``.
        map_expr (str): the value mapped from each input element.
        reduce_expr (str): how two partial values ``a`` and ``b`` combine.
        post_map_expr (str): writes the reduced value ``a`` to the outputs.
        identity (str or None): the reduction's identity (``"0"``).
        name (str): the kernel's name (dbr's start with ``dbr_``).
        reduce_type (str or None): the C type of partial values; CuPy's
            default (the first output's type) when None.
        preamble (str): code before the kernel.

    Returns:
        cupy.ReductionKernel: the same object for the same arguments.

    Raises:
        RuntimeError: CuPy or a GPU is missing (see :func:`dbr.gpu.require`).
    """
    key = (
        "reduce",
        in_params,
        out_params,
        map_expr,
        reduce_expr,
        post_map_expr,
        identity,
        name,
        reduce_type,
        preamble,
    )
    return _cached(
        key,
        f"dbr.gpu.reduce({name!r})",
        lambda cupy: cupy.ReductionKernel(
            in_params,
            out_params,
            map_expr,
            reduce_expr,
            post_map_expr,
            identity,
            name=name,
            reduce_type=reduce_type,
            preamble=preamble,
        ),
    )


def raw(code, name, *, options=(), backend="nvrtc"):
    """The ``cupy.RawKernel`` for ``name`` in ``code``, built once and cached.

    Args:
        code (str): CUDA C++ source defining ``extern "C" __global__ void name(...)``.
        name (str): the kernel's name (dbr's start with ``dbr_``).
        options (tuple of str): compiler options.
        backend (str): ``"nvrtc"`` or ``"nvcc"``.

    Returns:
        cupy.RawKernel: the same object for the same arguments.

    Raises:
        RuntimeError: CuPy or a GPU is missing (see :func:`dbr.gpu.require`).
    """
    options = tuple(options)
    key = ("raw", code, name, options, backend)
    return _cached(
        key,
        f"dbr.gpu.raw({name!r})",
        lambda cupy: cupy.RawKernel(code, name, options=options, backend=backend),
    )


_BUILDERS = {"elementwise": elementwise, "reduce": reduce, "raw": raw}
_by_definition = {}


def from_definition(definition, kind="elementwise"):
    """The kernel of a definition dict (the keyword arguments of :func:`elementwise`,
    :func:`reduce` or :func:`raw`, per ``kind``), built once.

    Other packages keep their kernels as module-level ``*_ELEMENTWISE``,
    ``*_REDUCTION`` and ``*_RAW`` dicts and call this on their GPU paths. The
    dict's identity is the cache key (a lookup that hashes no strings); the
    dict is kept with its kernel, so the identity cannot be reused.

    Raises:
        RuntimeError: CuPy or a GPU is missing (see :func:`dbr.gpu.require`).
        KeyError: ``kind`` is not one of 'elementwise', 'reduce', 'raw'.
    """
    entry = _by_definition.get(id(definition))
    if entry is None:
        entry = _by_definition[id(definition)] = (definition, _BUILDERS[kind](**definition))
    return entry[1]


def compile_count():
    """How many kernel objects the builders have constructed (cache misses) so far."""
    return _built


class CompileError(RuntimeError):
    """A kernel definition that NVRTC does not compile; the message holds NVRTC's log."""


_CTYPES = {
    "bool": "bool",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short",
    "uint16": "unsigned short",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
    "float16": "float16",
    "float32": "float",
    "float64": "double",
    "complex64": "complex<float>",
    "complex128": "complex<double>",
}
_HEADERS = (
    "cupy/complex.cuh",
    "cupy/carray.cuh",
    "cupy/atomics.cuh",
    "cupy/math_constants.h",
    "cupy/float16.cuh",
)


def _parse_params(params):
    parsed = []
    for entry in params.split(","):
        tokens = entry.split()
        if not tokens:
            continue
        is_raw = tokens[0] == "raw"
        if is_raw:
            tokens = tokens[1:]
        if len(tokens) != 2 or not tokens[1].isidentifier():
            raise ValueError(f"cannot parse kernel parameter {entry.strip()!r} in {params!r}")
        parsed.append((tokens[0], tokens[1], is_raw))
    return parsed


def _placeholders(params):
    names = []
    for type_name, _, _ in params:
        if type_name not in _CTYPES and type_name not in names:
            names.append(type_name)
    return names


def _binding(placeholders, dtype):
    if isinstance(dtype, dict):
        missing = [p for p in placeholders if p not in dtype]
        if missing:
            raise ValueError(f"no dtype given for type placeholders {missing}")
        return {p: _CTYPES[numpy.dtype(dtype[p]).name] for p in placeholders}
    ctype = _CTYPES[numpy.dtype(dtype).name]
    return dict.fromkeys(placeholders, ctype)


def _ctype(type_name):
    return _CTYPES.get(type_name, type_name)


def _signature(params, indexers):
    args = []
    for type_name, name, is_raw in params:
        prefix = "" if is_raw else "_raw_"
        args.append(f"CArray<{_ctype(type_name)}, 1> {prefix}{name}")
    return ", ".join(args + list(indexers))


def _loads(params, indexer, is_input):
    lines = []
    for type_name, name, is_raw in params:
        if not is_raw:
            const, ref = ("const ", "") if is_input else ("", "&")
            lines.append(f"{const}{_ctype(type_name)} {ref}{name} = _raw_{name}[{indexer}.get()];")
    return "\n    ".join(lines)


def _prologue(bindings, preamble):
    includes = "\n".join(f"#include <{h}>" for h in _HEADERS)
    typedefs = "\n".join(f"typedef {ctype} {p};" for p, ctype in bindings.items())
    return f"{includes}\n{typedefs}\n{preamble}\n"


def _elementwise_source(spec, bindings):
    ins = _parse_params(spec["in_params"])
    outs = _parse_params(spec["out_params"])
    signature = _signature(ins + outs, ["CIndexer<1> _ind"])
    return _prologue(bindings, spec.get("preamble", "")) + (
        f'extern "C" __global__ void {spec["name"]}({signature}) {{\n'
        f"  {spec.get('loop_prep', '')};\n"
        "  CUPY_FOR(i, _ind.size()) {\n"
        "    _ind.set(i);\n"
        f"    {_loads(ins, '_ind', True)}\n"
        f"    {_loads(outs, '_ind', False)}\n"
        f"    {spec['operation']};\n"
        "  }\n"
        f"  {spec.get('after_loop', '')};\n"
        "}\n"
    )


def _reduction_source(spec, bindings):
    ins = _parse_params(spec["in_params"])
    outs = _parse_params(spec["out_params"])
    reduce_type = spec.get("reduce_type") or _ctype(outs[0][0])
    identity = spec.get("identity") or ""
    indexers = ["CIndexer<1> _in_ind", "CIndexer<1> _out_ind", "int _block_stride"]
    return _prologue(bindings, spec.get("preamble", "")) + (
        f"#define REDUCE(a, b) ({spec['reduce_expr']})\n"
        f"#define POST_MAP(a) ({spec['post_map_expr']})\n"
        f"typedef {reduce_type} _type_reduce;\n"
        f'extern "C" __global__ void {spec["name"]}({_signature(ins + outs, indexers)}) {{\n'
        "  __shared__ char _sdata_raw[512 * sizeof(_type_reduce)];\n"
        "  _type_reduce *_sdata = reinterpret_cast<_type_reduce*>(_sdata_raw);\n"
        "  unsigned int _tid = threadIdx.x;\n"
        "  for (ptrdiff_t _i = blockIdx.x; _i < _out_ind.size(); _i += gridDim.x) {\n"
        f"    _type_reduce _s = _type_reduce({identity});\n"
        "    for (ptrdiff_t _j = _i + _tid * _out_ind.size(); _j < _in_ind.size();\n"
        "         _j += blockDim.x * _out_ind.size()) {\n"
        "      _in_ind.set(_j);\n"
        f"      {_loads(ins, '_in_ind', True)}\n"
        f"      _type_reduce _a = static_cast<_type_reduce>({spec['map_expr']});\n"
        "      _s = REDUCE(_s, _a);\n"
        "    }\n"
        "    _sdata[_tid] = _s;\n"
        "    __syncthreads();\n"
        "    for (unsigned int _half = blockDim.x / 2; _half > 0; _half >>= 1) {\n"
        "      if (_tid < _half) {\n"
        "        _type_reduce _a = _sdata[_tid], _b = _sdata[_tid + _half];\n"
        "        _sdata[_tid] = REDUCE(_a, _b);\n"
        "      }\n"
        "      __syncthreads();\n"
        "    }\n"
        "    if (_tid == 0) {\n"
        "      _out_ind.set(_i);\n"
        f"      {_loads(outs, '_out_ind', False)}\n"
        "      POST_MAP(_sdata[0]);\n"
        "    }\n"
        "    __syncthreads();\n"
        "  }\n"
        "}\n"
    )


def _nvrtc_options(arch, extra=()):
    from cupy._core import core
    from cupy.cuda import compiler

    try:
        options = tuple(core.assemble_cupy_compiler_options(()))
    except AttributeError:  # a CuPy without it: the same include paths, spelt out
        options = (f"-I{core._get_header_dir_path()}", "--std=c++17")
        options += tuple(compiler._get_extra_include_dir_opts())
    return (
        *options,
        *extra,
        f"--gpu-architecture={arch}",
        "-ftz=true",
        "--device-as-default-execution-space",
    )


def _compile(source, name, label, options):
    from cupy_backends.cuda.libs import nvrtc

    program = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(program, list(options))
        except nvrtc.NVRTCError as e:
            log = nvrtc.getProgramLog(program)
            lines = enumerate(source.splitlines(), 1)
            numbered = "\n".join(f"{n:4d}  {line}" for n, line in lines)
            raise CompileError(
                f"kernel {name!r} ({label}) does not compile under NVRTC: {e}\n"
                f"{log}\n--- source ---\n{numbered}"
            ) from None
        ptx = nvrtc.getPTX(program)
    finally:
        nvrtc.destroyProgram(program)
    if f".entry {name}(".encode() not in ptx:
        raise CompileError(f'kernel {name!r} ({label}): the source defines no extern "C" {name}')


def check_compiles(kind, spec, dtypes=("float32",), arch="compute_90"):
    """Compile a kernel definition with NVRTC for each dtype, without a GPU.

    The source is close to what CuPy generates: CuPy's headers, a typedef
    binding each type placeholder (``T``, ``S``...) to the dtype's C type
    (float16 is CuPy's ``float16``), each non-raw parameter as a variable of
    its type read at ``_ind.get()``, raw parameters as ``CArray``s, the
    preamble, and for reductions ``REDUCE(a, b)``, ``POST_MAP(a)``,
    ``_type_reduce`` and ``identity`` applied as CuPy applies them. Arrays are
    1-d here, so a raw array indexed by a multi-dimensional index is not
    covered; compiling is no proof that the kernel computes the right thing.

    Args:
        kind (str): ``"elementwise"``, ``"reduce"`` or ``"raw"``.
        spec (dict): the keyword arguments of the matching builder.
        dtypes: dtypes bound to every placeholder, one compilation each; an
            entry may instead be a dict from placeholder to dtype. Ignored for
            ``"raw"``, whose source is compiled once as it is.
        arch (str): the virtual architecture NVRTC compiles for.

    Raises:
        CompileError: NVRTC rejects the source; the message names the
            kernel and the dtype and holds NVRTC's log and the source.
        RuntimeError: CuPy is not installed (NVRTC comes with it).
        ValueError: an unknown ``kind`` or a parameter list that cannot be parsed.
    """
    if _cupy.cupy is None:
        raise RuntimeError(f"check_compiles needs CuPy for NVRTC: {_cupy.unavailable_reason}")
    name = spec["name"]
    if kind == "raw":
        _compile(spec["code"], name, "raw", _nvrtc_options(arch, tuple(spec.get("options", ()))))
        return
    if kind == "elementwise":
        generate, params = _elementwise_source, spec["in_params"] + "," + spec["out_params"]
    elif kind == "reduce":
        generate, params = _reduction_source, spec["in_params"] + "," + spec["out_params"]
    else:
        raise ValueError(
            f"unknown kernel kind {kind!r}: expected 'elementwise', 'reduce' or 'raw'"
        )
    placeholders = _placeholders(_parse_params(params))
    options = _nvrtc_options(arch)
    for dtype in dtypes:
        bindings = _binding(placeholders, dtype)
        label = f"{kind}, dtype {dtype if isinstance(dtype, dict) else numpy.dtype(dtype).name}"
        _compile(generate(spec, bindings), name, label, options)
