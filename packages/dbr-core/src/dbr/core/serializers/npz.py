"""NPZ serialization, key-compatible with Chainer v7's ``chainer.serializers.npz``.

An object is stored as a flat NPZ archive (a zip of ``.npy`` members), one
member per '/'-joined key such as ``'predictor/l1/W'``. Python scalars and
strings are stored as 0-d arrays (int64, float64, bool, unicode).

None (an uninitialised parameter) is stored the way Chainer stores it, as a
0-d object array holding None. NumPy can store such an array only by
pickling it, and unpickling runs code named by the file, so dbr never
unpickles: archives are opened with ``allow_pickle=False``, and a 0-d object
member is accepted as None only when its pickle stream, read opcode by opcode
without importing or calling anything, is exactly NumPy's encoding of a 0-d
object array holding None. Any other object member is refused with an error
naming its key. dbr writes None with ``numpy.core`` as the module name, as
NumPy 1.x did, so that Chainer 7 with any NumPy 1.x reads it.
"""

import pickle
import pickletools
import zipfile

import numpy
import numpy.lib.format as npy_format

from dbr.core import backend
from dbr.core.serializers.base import (
    _NONE_ENTRY,
    Serializer,
    _array_entry,
    _file_name,
    _ignore_predicate,
    _is_path,
    _normalize_path,
    _refused_entry,
    _StoreDeserializer,
    write_atomically,
)


class DictionarySerializer(Serializer):
    """Serializer into a flat dictionary ``{'/'-joined key: NumPy array}``.

    It writes no file: :func:`save_npz` writes the dictionary. Each value is
    stored as a NumPy copy (device arrays are copied to the host), a Python
    scalar or string as a 0-d array, None as ``numpy.asarray(None)``. Other
    object arrays are refused, since NPZ could store them only by pickling.

    Args:
        target: the dictionary to fill (a new one if None).
        path: the key prefix of this serializer; ``s['l1']`` gives a child
            serializer with prefix ``path + 'l1/'``.

    Attributes:
        target: the dictionary being filled.
        path: the key prefix.
    """

    def __init__(self, target=None, path=""):
        self.target = {} if target is None else target
        self.path = path

    def __getitem__(self, key):
        return DictionarySerializer(self.target, self.path + key.strip("/") + "/")

    def __call__(self, key, value):
        key = self.path + key.lstrip("/")
        self.target[key] = _to_storable(key, value, "DictionarySerializer")
        return value


def _to_storable(key, value, who):
    if value is None:
        return numpy.asarray(None)
    if isinstance(value, numpy.ndarray):
        array = value.copy()
    else:
        array = numpy.asarray(backend.to_cpu(value))
    if array.dtype.hasobject:
        raise TypeError(
            f"{who}: cannot store {key!r}: a {type(value).__name__} becomes an object "
            f"array, which NPZ could hold only by pickling; store arrays, scalars, "
            f"strings or None"
        )
    return array


def save_npz(file, obj, compression=True):
    """Save ``obj`` (an object with ``serialize``, or a dict of arrays) to an NPZ file.

    A path is written atomically: to a temporary file in the same directory,
    renamed over ``file`` only once complete, so a failure (in
    ``obj.serialize`` or while writing) leaves no partial file and an
    existing file untouched. A file object is written directly.

    Args:
        file: a path (str or os.PathLike) or a binary file object.
        obj: the object to save, or a dict ``{key: array}`` saved as is.
        compression: deflate the members (Chainer's default) or store them.
    """
    if isinstance(obj, dict):
        target = {k: _to_storable(k, v, "save_npz") for k, v in obj.items()}
    else:
        serializer = DictionarySerializer()
        serializer.save(obj)
        target = serializer.target
    if _is_path(file):
        write_atomically(file, lambda tmp: _write_npz(tmp, target, compression))
    else:
        _write_npz(file, target, compression)


def _write_npz(file, target, compression):
    mode = zipfile.ZIP_DEFLATED if compression else zipfile.ZIP_STORED
    with zipfile.ZipFile(file, mode="w", compression=mode, allowZip64=True) as archive:
        for key, array in target.items():
            with archive.open(key + ".npy", mode="w", force_zip64=True) as member:
                if array.dtype.hasobject:
                    npy_format.write_array_header_1_0(
                        member, {"descr": "|O", "fortran_order": False, "shape": ()}
                    )
                    member.write(_PICKLED_NONE)
                else:
                    npy_format.write_array(member, array, allow_pickle=False)


# NumPy 1.x's pickle (protocol 3) of numpy.asarray(None), as Chainer 7 wrote it.
_PICKLED_NONE = pickle.dumps(numpy.asarray(None), protocol=3).replace(
    b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n"
)

# Stand-ins for the globals a NumPy pickle names: unique objects that data cannot forge.
# Protocol 2 (NumPy < 1.17) spells the bytes b'b' as _codecs.encode('b', 'latin1').
_RECONSTRUCT, _NDARRAY, _DTYPE, _ENCODE = object(), object(), object(), object()
_KNOWN_GLOBALS = {
    ("_codecs", "encode"): _ENCODE,
    ("numpy.core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy._core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy", "ndarray"): _NDARRAY,
    ("numpy", "dtype"): _DTYPE,
}
_PUSH_ARG = {
    "BININT",
    "BININT1",
    "BININT2",
    "LONG1",
    "BINUNICODE",
    "SHORT_BINUNICODE",
    "BINUNICODE8",
    "SHORT_BINBYTES",
    "BINBYTES",
    "BINBYTES8",
    "SHORT_BINSTRING",
    "BINSTRING",
}
_PUSH_CONST = {"NONE": None, "NEWFALSE": False, "NEWTRUE": True, "EMPTY_TUPLE": ()}
_TUPLE_N = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}
_MAX_NONE_PICKLE = 1024


def _is_pickled_none(payload):
    """Whether ``payload`` is NumPy's pickle of a 0-d object array holding None.

    The opcodes are interpreted symbolically: a global is accepted only if it
    names one of NumPy's reconstruction functions and is never imported, a
    call is recorded, never made. Anything else makes the answer False.
    """
    stack, marks, memo = [], [], {}
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
            elif name == "MARK":
                marks.append(len(stack))
            elif name == "TUPLE":
                start = marks.pop()
                stack[start:] = [tuple(stack[start:])]
            elif name in _TUPLE_N:
                n = _TUPLE_N[name]
                stack[-n:] = [tuple(stack[-n:])]
            elif name == "APPEND":
                item = stack.pop()
                stack[-1].append(item)
            elif name in ("BINPUT", "LONG_BINPUT"):
                memo[arg] = stack[-1]
            elif name == "MEMOIZE":
                memo[len(memo)] = stack[-1]
            elif name in ("BINGET", "LONG_BINGET"):
                stack.append(memo[arg])
            elif name == "GLOBAL":
                stack.append(_KNOWN_GLOBALS[tuple(arg.split(" ", 1))])
            elif name == "STACK_GLOBAL":
                qualname = stack.pop()
                stack.append(_KNOWN_GLOBALS[(stack.pop(), qualname)])
            elif name == "REDUCE":
                args = stack.pop()
                stack.append(("call", stack.pop(), args))
            elif name == "BUILD":
                state = stack.pop()
                stack.append(("build", stack.pop(), state))
            elif name == "STOP":
                return _matches_none_array(stack.pop()) and not stack
            else:
                return False
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        return False
    return False


def _matches_none_array(obj):
    match obj:
        case (
            "build",
            ("call", g_reconstruct, (g_ndarray, (0,), typecode)),
            (_, (), ("build", ("call", g_dtype, (code, *_)), _), False, [None]),
        ):
            return (
                g_reconstruct is _RECONSTRUCT
                and g_ndarray is _NDARRAY
                and g_dtype is _DTYPE
                and code in ("O8", "O4")
                and typecode in (b"b", ("call", _ENCODE, ("b", "latin1")))
            )
    return False


class _NpzStore:
    """The key table of an opened NPZ archive (``numpy.load`` result) or of a dict of arrays.

    Headers are read without loading the data; object members are inspected
    without unpickling.
    """

    def __init__(self, npz, name):
        self.npz = npz
        self.name = name
        self._archive = getattr(npz, "zip", None)
        self._entries = {}
        if self._archive is not None:
            members = self._archive.namelist()
            self._members = {m[:-4] if m.endswith(".npy") else m: m for m in members}
        else:
            self._members = dict.fromkeys(npz)

    def names(self):
        return self._members.keys()

    def entry(self, key):
        if key not in self._members:
            return None
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = self._inspect(key)
        return entry

    def _inspect(self, key):
        if self._archive is None:
            value = self.npz[key]
            if value is None:
                return _NONE_ENTRY
            array = numpy.asarray(value)
            if array.dtype.hasobject:
                if array.shape == () and array[()] is None:
                    return _NONE_ENTRY
                return _refused_entry(
                    "the entry is an object array; dbr loads only arrays, "
                    "scalars, strings and None"
                )
            return _array_entry(array.shape, array.dtype)
        with self._archive.open(self._members[key]) as member:
            try:
                version = npy_format.read_magic(member)
                read_header = (
                    npy_format.read_array_header_1_0
                    if version == (1, 0)
                    else npy_format.read_array_header_2_0
                )
                shape, _, dtype = read_header(member)
            except ValueError as e:
                return _refused_entry(f"the member is not a .npy array ({e})")
            if not dtype.hasobject:
                return _array_entry(shape, dtype)
            if shape == () and dtype.kind == "O":
                payload = member.read(_MAX_NONE_PICKLE + 1)
                if len(payload) <= _MAX_NONE_PICKLE and _is_pickled_none(payload):
                    return _NONE_ENTRY
            return _refused_entry(
                "the file holds a pickled object array here, and dbr never "
                "unpickles (it runs code named by the file)"
            )

    def read(self, key):
        return numpy.asarray(self.npz[key])


class NpzDeserializer(_StoreDeserializer):
    """Deserializer from an NPZ archive, as written by :func:`save_npz` or Chainer.

    Args:
        npz: an archive opened by ``numpy.load`` (best with
            ``allow_pickle=False``; object members are inspected without
            unpickling either way), or a dict of arrays.
        path: the key prefix to load from, e.g. ``'updater/model:main/'`` in a
            trainer snapshot; a missing trailing '/' is added.
        strict: if True, a key the target requests and the archive lacks is an
            error and so, in :meth:`load`, is a key under ``path`` that the
            target does not request; if False both are skipped.
        ignore_names: a full key (str), a predicate on full keys (callable),
            or a list of them: keys to skip both ways.

    Calling it for one key raises :class:`DeserializationError` for a missing
    (strict) or mismatched key; :meth:`load` checks every key first and
    raises one error naming all problems before changing the target.
    Shape, dtype and type mismatches are errors whatever ``strict`` is.
    """

    def __init__(self, npz, path="", strict=True, ignore_names=None):
        self.npz = npz
        name = getattr(getattr(npz, "fid", None), "name", None)
        store = _NpzStore(npz, repr(name) if isinstance(name, str) else "the NPZ archive")
        self._setup(store, path, strict, ignore_names)


def load_npz(file, obj, path="", strict=True, ignore_names=None):
    """Load ``obj`` from an NPZ file written by :func:`save_npz` or by Chainer.

    Every key that ``obj.serialize`` requests is checked against the file
    (presence, shape, dtype, scalar type) before anything is set; a mismatch
    raises one :class:`DeserializationError` naming the file and every
    missing, unexpected and mismatched key, and leaves ``obj`` untouched.

    Args:
        file: a path or a binary file object.
        obj: the object to load into (it must have ``serialize``).
        path: the key prefix to load from (e.g. ``'updater/model:main/'``).
        strict: whether missing keys and, under ``path``, unexpected keys are
            errors (True) or skipped (False). Mismatches are always errors.
        ignore_names: keys to skip: a full key, a predicate, or a list of them.

    Raises:
        DeserializationError: the file does not match ``obj``.
    """
    _normalize_path(path, "load_npz")
    _ignore_predicate(ignore_names, "load_npz")
    npz = numpy.load(file, allow_pickle=False)
    if not isinstance(npz, numpy.lib.npyio.NpzFile):
        raise ValueError(f"load_npz: {_file_name(file)} is a .npy array, not an NPZ archive")
    with npz:
        deserializer = NpzDeserializer(npz, path=path, strict=strict, ignore_names=ignore_names)
        deserializer._caller = "load_npz"
        deserializer._store.name = _file_name(file)
        deserializer.load(obj)


__all__ = ["DictionarySerializer", "NpzDeserializer", "load_npz", "save_npz"]
