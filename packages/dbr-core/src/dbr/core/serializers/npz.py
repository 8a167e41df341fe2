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

import contextlib
import math
import pickle
import zipfile

import numpy
import numpy.lib.format as npy_format

from dbr.core import backend
from dbr.core.serializers.base import (
    _NONE_ENTRY,
    _READ_ERRORS,
    DeserializationError,
    Serializer,
    _array_entry,
    _cause,
    _damaged_entry,
    _describe_array,
    _file_name,
    _ignore_predicate,
    _is_path,
    _is_stored_none,
    _normalize_path,
    _quoted,
    _refused_entry,
    _StoreDeserializer,
    write_atomically,
)
from dbr.core.serializers.plain_pickle import read_plain_pickle


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
    if _is_stored_none(value):
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


def serialize(obj):
    """Serialize ``obj`` into a new dictionary ``{'/'-joined key: NumPy array}`` and return it.

    The dictionary is a :class:`DictionarySerializer`'s target: what
    :func:`save_npz` writes, and what an :class:`NpzDeserializer` loads from.
    """
    serializer = DictionarySerializer()
    serializer.save(obj)
    return serializer.target


def save_npz(file, obj, compression=True):
    """Save ``obj`` (an object with ``serialize``, or a dict of arrays) to an NPZ file.

    A path is written atomically: to a temporary file in the same directory,
    renamed over ``file`` only once complete, so a failure (in
    ``obj.serialize`` or while writing) leaves no partial file and an
    existing file untouched. A file object is written directly.

    Args:
        file: a path (str or os.PathLike) or a binary file object.
        obj: the object to save, or a dict ``{key: array}`` saved as is
            (such as a :class:`DictionarySerializer`'s target: a value None,
            or the ``numpy.asarray(None)`` that it stores for None, is
            stored as None).
        compression: deflate the members (Chainer's default) or store them.
    """
    if isinstance(obj, dict):
        target = {k: _to_storable(k, v, "save_npz") for k, v in obj.items()}
    else:
        target = serialize(obj)
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

_MAX_NONE_PICKLE = 1024


def _is_pickled_none(payload):
    """Whether ``payload`` is NumPy's pickle of a 0-d object array holding None.

    :func:`~dbr.core.serializers.plain_pickle.read_plain_pickle` reads it
    symbolically (nothing is imported or called), allowing object arrays only.
    """
    try:
        value = read_plain_pickle(payload, "npz member", array_kinds="O")
    except ValueError:
        return False
    return (
        isinstance(value, numpy.ndarray)
        and value.dtype == object
        and value.shape == ()
        and value[()] is None
    )


# Deflate expands at most about 1032 times (RFC 1951: a 258-byte match costs
# at least 2 bits); a member claiming more than this of its compressed size is damaged.
_MAX_DEFLATE_RATIO = 1032
_READ_CHUNK = 1 << 24


class _NpzStore:
    """The key table of an opened NPZ archive (``numpy.load`` result) or of a dict of arrays.

    Headers are read without loading the data, and the size each header
    declares is checked against the size the archive holds; object members
    are inspected without unpickling. Data is read member by member in full,
    so that the archive's CRC-32 is verified.
    """

    def __init__(self, npz, name):
        self.npz = npz
        self.name = name
        self._archive = getattr(npz, "zip", None)
        self._entries = {}
        self._offsets = {}
        if self._archive is not None:
            self._members = self._index_members()
        else:
            # A dict is read live, as Chainer does: it may be filled after the
            # deserializer is made (a DictionarySerializer/NpzDeserializer pair).
            self._members = npz

    def _index_members(self):
        """Map each key to its member's name; refuse keys whose member is ambiguous.

        zipfile cuts a name at a NUL byte and answers a duplicated name with
        its last member, so such an archive could show a reader other values
        than it shows dbr: the keys it touches are refused, naming the members.
        """
        by_key = {}
        for info in self._archive.infolist():
            name = info.filename
            by_key.setdefault(name[:-4] if name.endswith(".npy") else name, []).append(info)
        members = {}
        for key, infos in by_key.items():
            members[key] = infos[-1].filename
            raw = [info.orig_filename for info in infos]
            cut = [name for name in raw if "\0" in name]
            if cut:
                shown = cut[0].partition("\0")[0]
                reason = (
                    f"the member name {cut[0]!r} holds a NUL byte, which zip readers "
                    f"take as the end of the name {shown!r}"
                )
            elif len(infos) > 1 and len(set(raw)) == 1:
                reason = (
                    f"the archive holds {len(infos)} members named {raw[0]!r}, and dbr "
                    f"does not guess which one is meant"
                )
            elif len(infos) > 1:
                reason = (
                    f"the members {_quoted(raw)} all hold this key, and dbr does not "
                    f"guess which one is meant"
                )
            else:
                continue
            self._entries[key] = _refused_entry(reason)
        return members

    def names(self):
        return self._members.keys()

    def where(self, key):
        if self._archive is None:
            return "entry of the dict"
        return f"member {self._members.get(key, key + '.npy')!r}"

    def entry(self, key):
        if key not in self._members:
            return None
        entry = self._entries.get(key)
        if entry is None:
            try:
                entry = self._inspect(key)
            except _READ_ERRORS as e:
                entry = _damaged_entry(f"its header cannot be read ({_cause(e)})")
            self._entries[key] = entry
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
        info = self._archive.getinfo(self._members[key])
        bound = _size_bound(info)
        if bound is not None:
            return _damaged_entry(bound)
        with self._archive.open(info) as member:
            try:
                shape, fortran_order, dtype = _read_npy_header(member)
            except ValueError as e:
                return _damaged_entry(f"the member is not a .npy array ({e})")
            if not dtype.hasobject:
                held = info.file_size - member.tell()
                declared = math.prod(shape) * dtype.itemsize
                if declared != held:
                    return _damaged_entry(
                        f"the header declares {_describe_array(dtype, tuple(shape))} "
                        f"({declared} bytes), the member holds {held} bytes of data"
                    )
                self._offsets[key] = (member.tell(), fortran_order)
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
        if self._archive is None:
            return numpy.asarray(self.npz[key])
        entry = self.entry(key)
        if entry.kind != "array":
            raise ValueError(f"the member is not a readable array ({entry.reason})")
        offset, fortran_order = self._offsets[key]
        with self._archive.open(self._members[key]) as member:
            member.read(offset)
            array = _read_exactly(member, entry.shape, entry.dtype, fortran_order)
            if member.read(1):
                raise ValueError("the member holds more data than its header declares")
        return array


def _size_bound(info):
    """Why the sizes the zip directory gives for a member cannot be true, or None."""
    if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
        return (
            f"the archive declares {info.file_size} bytes for the stored member, "
            f"which holds {info.compress_size} bytes"
        )
    if (
        info.compress_type == zipfile.ZIP_DEFLATED
        and info.file_size > _MAX_DEFLATE_RATIO * info.compress_size + 1024
    ):
        return (
            f"the archive declares {info.file_size} bytes for the member, more than its "
            f"{info.compress_size} compressed bytes can hold"
        )
    return None


def _read_npy_header(member):
    version = npy_format.read_magic(member)
    if version == (1, 0):
        return npy_format.read_array_header_1_0(member)
    return npy_format.read_array_header_2_0(member)


def _read_exactly(member, shape, dtype, fortran_order):
    """Read an array of ``shape`` and ``dtype`` from ``member`` in chunks (no second copy)."""
    count = math.prod(shape)
    flat = numpy.empty(count, dtype=dtype)
    buffer = flat.view(numpy.uint8) if dtype.itemsize else numpy.empty(0, numpy.uint8)
    view, done = memoryview(buffer), 0
    while done < len(buffer):
        n = member.readinto(view[done : done + _READ_CHUNK])
        if not n:
            raise EOFError(
                f"the member ends after {done} of the {len(buffer)} bytes of data its "
                f"header declares"
            )
        done += n
    if fortran_order:
        return flat.reshape(shape[::-1]).transpose()
    return flat.reshape(shape)


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
    (presence, shape, dtype, scalar type, and the size each member's header
    declares against the data the member holds), then every requested value
    is read in full (verifying the archive's checksums) before anything is
    set. Any problem raises one :class:`DeserializationError` naming the file
    and every missing, unexpected, mismatched and damaged key, and leaves
    ``obj`` untouched.

    Args:
        file: a path or a binary file object (read from its current position).
        obj: the object to load into (it must have ``serialize``).
        path: the key prefix to load from (e.g. ``'updater/model:main/'``).
        strict: whether missing keys and, under ``path``, unexpected keys are
            errors (True) or skipped (False). Mismatches are always errors.
        ignore_names: keys to skip: a full key, a predicate, or a list of them.

    Raises:
        DeserializationError: the file is not a readable NPZ archive (its
            ``unreadable`` holds ``(None, reason)``), or does not match ``obj``.
        MemoryError: a value does not fit in memory (naming file and key).
    """
    _normalize_path(path, "load_npz")
    _ignore_predicate(ignore_names, "load_npz")
    name = _file_name(file)
    with contextlib.ExitStack() as stack:
        fid = stack.enter_context(_open_for_reading(file, name, "load_npz"))
        npz = stack.enter_context(_open_npz(fid, name))
        deserializer = NpzDeserializer(npz, path=path, strict=strict, ignore_names=ignore_names)
        deserializer._caller = "load_npz"
        deserializer._store.name = name
        deserializer.load(obj)


def _open_for_reading(file, name, who):
    if not _is_path(file):
        return contextlib.nullcontext(file)
    try:
        return open(file, "rb")
    except OSError as e:
        raise DeserializationError(
            f"{who}: cannot open {name}: {_cause(e)}",
            file=name,
            unreadable=[(None, _cause(e))],
        ) from e


_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def _open_npz(fid, name):
    """Open ``fid`` as an NPZ archive, or raise a DeserializationError saying what it is."""

    def refuse(reason, cause=None):
        message = f"load_npz: {name} {reason}; nothing was loaded."
        error = DeserializationError(message, file=name, unreadable=[(None, reason)])
        raise error from cause

    try:
        start = fid.tell()
        magic = fid.read(len(_HDF5_MAGIC))
        fid.seek(start)
    except _READ_ERRORS as e:
        refuse(f"cannot be read ({_cause(e)})", e)
    if magic.startswith(npy_format.MAGIC_PREFIX):
        refuse("is a .npy array, not an NPZ archive (load it with numpy.load)")
    if magic.startswith(_HDF5_MAGIC):
        refuse("is an HDF5 file, not an NPZ archive (load it with load_hdf5)")
    if not magic.startswith(_ZIP_MAGICS):
        what = "it is empty" if not magic else f"it starts with {magic!r}"
        refuse(f"is not an NPZ archive (a zip file): {what}")
    try:
        return numpy.load(fid, allow_pickle=False)
    except _READ_ERRORS as e:
        refuse(f"is not a complete NPZ archive, truncated or corrupt? ({_cause(e)})", e)


__all__ = ["DictionarySerializer", "NpzDeserializer", "load_npz", "save_npz", "serialize"]
