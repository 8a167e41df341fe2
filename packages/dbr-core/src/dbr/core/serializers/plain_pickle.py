"""Read the plain data of a pickle without unpickling it: the one pickle reader of dbr.

Unpickling runs whatever the file asks for, so dbr never does. This reader walks the
pickle's opcodes (``pickletools.genops``) and interprets only those that build plain
data: None, booleans, ints, floats, strings, bytes, tuples, lists and dicts, plus NumPy
arrays in the form NumPy pickles them (``numpy.core.multiarray._reconstruct`` and
``numpy.dtype``, with ``_codecs.encode`` for the bytes of a Python 3 pickle). Those four
names are recognised, never imported or called; any other name, or any other opcode,
rejects the file. Each caller says which array dtype kinds it accepts: CIFAR's batches
arrays of numbers (``"biuf"``), an npz member Chainer wrote for None a 0-d object array
(``"O"``, whose elements must themselves be plain data).
"""

import math
import pickletools

import numpy


class _Name:
    """A global the pickle names, recognised but never imported."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


_RECONSTRUCT = _Name("numpy _reconstruct")
_NDARRAY = _Name("numpy.ndarray")
_DTYPE = _Name("numpy.dtype")
_ENCODE = _Name("_codecs.encode")
_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy._core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy", "ndarray"): _NDARRAY,
    ("numpy", "dtype"): _DTYPE,
    ("_codecs", "encode"): _ENCODE,
}
_PUSH_ARG = {
    "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT",
    "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8",
    "SHORT_BINSTRING", "BINSTRING", "SHORT_BINBYTES", "BINBYTES", "BINBYTES8",
}  # fmt: skip
_PUSH_CONST = {"NONE": None, "NEWFALSE": False, "NEWTRUE": True, "EMPTY_TUPLE": ()}
_TUPLE_N = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}


class _DTypeSpec:
    """``numpy.dtype(code)`` as pickled, before its state gives the byte order."""

    __slots__ = ("code", "byteorder")

    def __init__(self, code):
        self.code = code
        self.byteorder = "|"

    def resolve(self, where, kinds):
        try:
            dtype = numpy.dtype(self.code)
        except TypeError:
            raise ValueError(f"{where}: unknown array dtype {self.code!r}") from None
        if dtype.kind not in kinds:
            raise ValueError(
                f"{where}: expected an array of dtype kind in {kinds!r}, got dtype {dtype}"
            )
        return dtype if self.byteorder == "|" else dtype.newbyteorder(self.byteorder)


class _PendingArray:
    """``_reconstruct(ndarray, ...)`` before its state gives the shape, dtype and data."""

    __slots__ = ()


def _as_bytes(value, where):
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        # A Python 2 str read as latin-1 holds one character per byte.
        return value.encode("latin-1")
    raise ValueError(f"{where}: expected the array's data as bytes, got {type(value).__name__}")


def _call(func, args, where):
    if func is _ENCODE and len(args) == 2 and args[1] in ("latin1", "latin-1"):
        return args[0].encode("latin-1")
    if func is _DTYPE and args and isinstance(args[0], str):
        return _DTypeSpec(args[0])
    if func is _RECONSTRUCT and len(args) == 3 and args[0] is _NDARRAY:
        return _PendingArray()
    name = func.name if isinstance(func, _Name) else type(func).__name__
    raise ValueError(f"{where}: the pickle calls {name} in a way that is not plain data")


def _build(target, state, where, kinds):
    if isinstance(target, _DTypeSpec) and isinstance(state, tuple) and len(state) >= 2:
        if state[1] not in ("<", ">", "|", "="):
            raise ValueError(f"{where}: unknown byte order {state[1]!r} of an array dtype")
        target.byteorder = state[1]
        return target
    if isinstance(target, _PendingArray) and isinstance(state, tuple) and len(state) == 5:
        _, shape, dtype_spec, fortran_order, data = state
        if not isinstance(dtype_spec, _DTypeSpec) or not (
            isinstance(shape, tuple) and all(isinstance(n, int) and n >= 0 for n in shape)
        ):
            raise ValueError(f"{where}: malformed array state in the pickle")
        dtype = dtype_spec.resolve(where, kinds)
        if dtype.kind == "O":
            return _object_array(shape, data, where)
        data = _as_bytes(data, where)
        expected = math.prod(shape) * dtype.itemsize
        if len(data) != expected:
            raise ValueError(
                f"{where}: an array of shape {shape} and dtype {dtype} needs {expected} "
                f"bytes, the pickle holds {len(data)}"
            )
        array = numpy.frombuffer(data, dtype)
        return array.reshape(shape, order="F" if fortran_order else "C")
    raise ValueError(f"{where}: the pickle sets the state of an object that is not an array")


def _object_array(shape, items, where):
    if not isinstance(items, list) or len(items) != math.prod(shape):
        raise ValueError(f"{where}: an object array of shape {shape} needs a list of its items")
    array = numpy.empty(len(items), dtype=object)
    array[:] = items
    return array.reshape(shape)


def read_plain_pickle(payload, where, array_kinds="biuf"):
    """Return the object that the pickle ``payload`` (bytes) describes, built from plain data.

    Python 2 strings are decoded as latin-1, as ``pickle.load(f, encoding='latin-1')``
    would; arrays of numbers are read-only views of their bytes.

    Args:
        payload (bytes): the pickle.
        where (str): names the file in error messages.
        array_kinds (str): the NumPy dtype kinds (``dtype.kind``) of the arrays the
            caller accepts; ``"O"`` allows object arrays of plain data.

    Raises:
        ValueError: if the pickle is malformed or holds anything but plain data and
            arrays of those kinds (naming what it found); nothing in it is executed.
    """
    stack, marks, memo = [], [], {}

    def pop_mark():
        start = marks.pop()
        items = stack[start:]
        del stack[start:]
        return items

    try:
        for op, arg, _ in pickletools.genops(payload):
            name = op.name
            if name in ("PROTO", "FRAME"):
                continue
            if name in _PUSH_ARG:
                stack.append(arg)
            elif name in _PUSH_CONST:
                stack.append(_PUSH_CONST[name])
            elif name == "EMPTY_LIST":
                stack.append([])
            elif name == "EMPTY_DICT":
                stack.append({})
            elif name == "MARK":
                marks.append(len(stack))
            elif name == "TUPLE":
                stack.append(tuple(pop_mark()))
            elif name in _TUPLE_N:
                n = _TUPLE_N[name]
                stack[-n:] = [tuple(stack[-n:])]
            elif name == "LIST":
                stack.append(pop_mark())
            elif name == "DICT":
                items = pop_mark()
                stack.append(dict(zip(items[::2], items[1::2], strict=True)))
            elif name == "APPEND":
                item = stack.pop()
                stack[-1].append(item)
            elif name == "APPENDS":
                items = pop_mark()
                stack[-1].extend(items)
            elif name == "SETITEM":
                value = stack.pop()
                key = stack.pop()
                stack[-1][key] = value
            elif name == "SETITEMS":
                items = pop_mark()
                stack[-1].update(zip(items[::2], items[1::2], strict=True))
            elif name in ("BINPUT", "LONG_BINPUT"):
                memo[arg] = stack[-1]
            elif name == "MEMOIZE":
                memo[len(memo)] = stack[-1]
            elif name in ("BINGET", "LONG_BINGET"):
                stack.append(memo[arg])
            elif name in ("GLOBAL", "STACK_GLOBAL"):
                if name == "GLOBAL":
                    module, qualname = arg.split(" ", 1)
                else:
                    qualname = stack.pop()
                    module = stack.pop()
                known = _GLOBALS.get((module, qualname))
                if known is None:
                    raise ValueError(
                        f"{where}: the pickle refers to {module}.{qualname}; only plain data "
                        "and NumPy arrays are read (the file is never unpickled)"
                    )
                stack.append(known)
            elif name == "REDUCE":
                args = stack.pop()
                stack.append(_call(stack.pop(), args, where))
            elif name == "BUILD":
                state = stack.pop()
                stack.append(_build(stack.pop(), state, where, array_kinds))
            elif name == "STOP":
                if len(stack) != 1 or marks:
                    raise ValueError(f"{where}: malformed pickle (stack left at STOP)")
                return stack.pop()
            else:
                raise ValueError(
                    f"{where}: the pickle uses the opcode {name}, which builds something other "
                    "than plain data (the file is never unpickled)"
                )
    except ValueError as error:
        if str(error).startswith(f"{where}: "):
            raise
        raise ValueError(f"{where}: malformed pickle ({error})") from None
    except (IndexError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"{where}: malformed pickle ({type(error).__name__}: {error})") from None
    raise ValueError(f"{where}: truncated pickle (no STOP opcode)")
