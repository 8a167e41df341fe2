"""The serialization protocol, and the checked loading that every file format shares.

An object takes part in serialization through one method,
``serialize(serializer)``. It calls ``serializer(key, value)`` for each value
it owns and ``child.serialize(serializer[name])`` for each child. A
:class:`Serializer` stores the value and returns it; a :class:`Deserializer`
returns the stored value: arrays are copied into ``value`` in place, scalars
and strings come back converted to ``type(value)``, and a ``value`` of None
(an uninitialised parameter) gets the stored array itself. Keys are
'/'-joined paths such as ``'predictor/l1/W'``.

Loading a whole object (:meth:`Deserializer.load`, ``load_npz``,
``load_hdf5``) runs in two phases. First it walks ``serialize`` with a
recording deserializer that changes nothing, compares every requested key
with the file (presence, shape, dtype, and the size each header declares
against the data the file holds), then reads every requested value in full
(which verifies zip CRCs and HDF5 chunks) into a staging table; any problem
raises one :class:`DeserializationError` naming the file and every key at
fault, and the object is untouched. Only then does a second ``serialize``
walk assign the staged values, arrays and Python values (counters, iterator
positions) alike, so that no failure of the file leaves an object half loaded.
"""

import contextlib
import os
import secrets
import struct
import zipfile
import zlib
from collections import namedtuple

import numpy

from dbr.core import backend, initializers
from dbr.core.configuration import config


class AbstractSerializer:
    """The base of serializers and deserializers: ``s[name]`` gives a child, ``s(key, value)``."""

    def __getitem__(self, key):
        """Return the child serializer for the sub-tree ``key``."""
        raise NotImplementedError

    def __call__(self, key, value):
        """Save or load ``value`` (array, scalar, str or None) under ``key``; return the value.

        A serializer stores ``value`` and returns it unchanged. A deserializer
        copies a stored array into an array ``value`` in place and returns it,
        returns a stored scalar or string converted to ``type(value)``, and
        returns the stored array itself when ``value`` is None. A stored None
        is returned as None.
        """
        raise NotImplementedError


class Serializer(AbstractSerializer):
    """Base of the serializers, which write an object's values."""

    def save(self, obj):
        """Serialize ``obj`` (calls ``obj.serialize(self)``)."""
        obj.serialize(self)


class Deserializer(AbstractSerializer):
    """Base of the deserializers, which set an object's values from stored ones.

    Attributes:
        dry_run: False for a real load. True for the key-recording pass that
            loading runs before it changes anything: then ``serializer(key,
            value)`` returns ``value`` unchanged (except a str ``value``, which
            gets the stored string, so that a target can read a structure
            descriptor such as a JSON list of names), and ``serialize`` must
            request the keys it would request in a real load without changing
            the object.
    """

    dry_run = False

    def load(self, obj):
        """Deserialize ``obj`` (calls ``obj.serialize(self)``)."""
        obj.serialize(self)


class DeserializationError(KeyError, ValueError, TypeError):
    """A file does not match the object being loaded, or cannot be read.

    Raised once, before anything is loaded, naming every key that the object
    expects and the file lacks (``missing``), every key that the file holds
    under the loaded path and the object does not expect (``unexpected``),
    every entry whose shape, type or content does not fit (``mismatched``, as
    ``(key, description)`` pairs), and every entry whose data is damaged
    (``unreadable``, as ``(key, description)`` pairs: a bad checksum, a
    truncated member, a header declaring more or less data than the file
    holds; the key is None when the file as a whole cannot be read), together
    with the file.

    It is a :class:`KeyError` (what Chainer raised for a missing key, and
    what Chainer-style ``serialize`` methods catch to tolerate one), a
    :class:`ValueError` (what Chainer raised for a shape mismatch) and a
    :class:`TypeError` (what Chainer raised for a value that does not fit a
    scalar's type, such as a float into an int).
    """

    def __init__(
        self, message, file=None, missing=(), unexpected=(), mismatched=(), unreadable=()
    ):
        super().__init__(message)
        self.file = file
        self.missing = list(missing)
        self.unexpected = list(unexpected)
        self.mismatched = list(mismatched)
        self.unreadable = list(unreadable)

    __str__ = BaseException.__str__


# How a file holds one key: kind is 'array' (shape, dtype known), 'none' (a
# stored None), 'refused' (a value dbr does not load, reason says why) or
# 'damaged' (the file is corrupt there, reason says how).
_Entry = namedtuple("_Entry", ["kind", "shape", "dtype", "reason"])


def _array_entry(shape, dtype):
    return _Entry("array", tuple(shape), numpy.dtype(dtype), None)


_NONE_ENTRY = _Entry("none", None, None, None)


def _refused_entry(reason):
    return _Entry("refused", None, None, reason)


def _damaged_entry(reason):
    return _Entry("damaged", None, None, reason)


# What reading a damaged file raises: zipfile.BadZipFile, zlib.error and
# struct.error are not OSError or ValueError; h5py raises RuntimeError and
# KeyError for broken links.
_READ_ERRORS = (OSError, ValueError, EOFError, RuntimeError, KeyError, zipfile.BadZipFile)
_READ_ERRORS += (zlib.error, struct.error)


def _cause(error):
    return f"{type(error).__name__}: {error}"


def _describe_entry(entry):
    if entry.kind == "none":
        return "None"
    return _describe_array(entry.dtype, entry.shape)


def _describe_array(dtype, shape):
    if dtype.kind == "U":
        return "a string" if shape == () else f"a string array of shape {shape}"
    return f"{dtype} array of shape {shape}"


def _is_stored_none(value):
    """Whether ``value`` is None, or the 0-d object array holding None that serializers store.

    ``DictionarySerializer`` stores None as ``numpy.asarray(None)`` (as
    Chainer does), and a snapshot saves that dictionary with ``save_npz`` or
    ``save_hdf5``: those must write it as None again.
    """
    return value is None or (
        isinstance(value, numpy.ndarray)
        and value.dtype.hasobject
        and value.shape == ()
        and value[()] is None
    )


class _LazyParameter:
    """What a load sees of an uninitialised parameter: the dtype it will have, and its maker.

    dbr's deserializers get it in place of the parameter's None (see
    :func:`_serialize_parameter`), so that they check the stored dtype as for
    an initialised parameter of that dtype, and make the array with the
    parameter's initializer (which may refuse the stored shape) before they
    change anything.
    """

    __slots__ = ("param", "device", "dtype")

    def __init__(self, param, device):
        self.param = param
        self.device = backend.get_device(device)
        dtype = getattr(param.initializer, "dtype", None)
        self.dtype = numpy.dtype(config.dtype if dtype is None else dtype)

    def make(self, data):
        """Return ``(array, None)``: the initializer's array of ``data``'s shape holding ``data``.

        The initializer runs first, as ``Parameter.initialize`` runs it, so
        that a load draws from the random generators what Chainer's does.
        Return ``(None, reason)`` if the initializer cannot make that shape.
        """
        initializer = self.param.initializer
        device = self.device
        try:
            array = initializers.generate_array(initializer, data.shape, device.xp, device=device)
        except (ValueError, TypeError, IndexError, ArithmeticError) as e:
            return None, (
                f"the target holds {_describe_value(self)} whose initializer "
                f"{type(initializer).__name__} cannot make the file's "
                f"{_describe_array(data.dtype, tuple(data.shape))} ({_cause(e)})"
            )
        backend.copyto(array, data)
        return array, None


def _serialize_parameter(serializer, key, param, device):
    """Save or load ``param`` under ``key`` with ``serializer``: ``Link.serialize``'s step.

    An initialised parameter's array is passed (a deserializer loads it in
    place). An uninitialised one reaches dbr's deserializers as a
    :class:`_LazyParameter`, which they check and fill before the load
    changes anything, and gets the array they return; any other serializer
    gets None and, as in Chainer, an array it returns initialises the
    parameter on ``device``.
    """
    if param.array is not None:
        serializer(key, param.array)
        return
    if isinstance(serializer, (_StoreDeserializer, _KeyRecorder)):
        data = serializer(key, _LazyParameter(param, device))
        if data is not None and not isinstance(data, _LazyParameter):
            param._initialize_with(data, device)
        return
    data = serializer(key, None)
    if data is not None:
        param.initialize(data.shape, device=device)
        backend.copyto(param.array, data)


def _describe_value(value):
    if isinstance(value, _LazyParameter):
        return f"an uninitialized {value.dtype} parameter"
    if value is None:
        return "None (uninitialized)"
    if isinstance(value, numpy.generic):
        return f"{value.dtype} scalar"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return _describe_array(numpy.dtype(value.dtype), tuple(value.shape))
    return type(value).__name__


# File dtype kinds a Python scalar target accepts (bool before int: bool is an int).
_SCALAR_KINDS = ((bool, "b"), (int, "biu"), (float, "biuf"), (complex, "biufc"), (str, "U"))


def _mismatch(entry, value):
    """Return why the stored ``entry`` cannot be loaded into ``value``, or None if it can."""
    if entry.kind in ("refused", "damaged"):
        return entry.reason
    if isinstance(value, _LazyParameter):
        if entry.kind == "none" or numpy.can_cast(entry.dtype, value.dtype, casting="same_kind"):
            return None
        return f"the target holds {_describe_value(value)}, the file {_describe_entry(entry)}"
    if entry.kind == "none" or value is None:
        if entry.kind == "none" and value is not None:
            return f"the file holds None, the target holds {_describe_value(value)}"
        return None
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        shape, dtype = tuple(value.shape), numpy.dtype(value.dtype)
        fits = numpy.can_cast(entry.dtype, dtype, casting="same_kind")
    else:
        kinds = next((k for t, k in _SCALAR_KINDS if isinstance(value, t)), None)
        if kinds is None:
            return f"the target holds a {type(value).__name__}, which cannot be deserialized"
        shape, fits = (), entry.dtype.kind in kinds
    if entry.shape == shape and fits:
        return None
    return f"the target holds {_describe_value(value)}, the file {_describe_entry(entry)}"


def _assign(value, data):
    """Load the stored array ``data`` into ``value`` the way a deserializer returns it.

    For a :class:`_LazyParameter`, ``data`` is the array it made: the value to return.
    """
    if value is None or isinstance(value, _LazyParameter):
        return data
    if isinstance(value, numpy.generic):
        return value.dtype.type(data[()])
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        backend.copyto(value, data)
        return value
    return type(value)(data[()])


def _ignore_predicate(ignore_names, who):
    """Turn Chainer's ``ignore_names`` (str, callable, or a list of them) into one predicate."""
    if ignore_names is None:
        return lambda key: False
    names = ignore_names if isinstance(ignore_names, (list, tuple)) else (ignore_names,)
    for name in names:
        if not (isinstance(name, str) or callable(name)):
            raise ValueError(
                f"{who}: ignore_names must be a str, a callable, or a list of them; "
                f"got {name!r} ({type(name).__name__})"
            )
    exact = {name for name in names if isinstance(name, str)}
    tests = [name for name in names if not isinstance(name, str)]
    return lambda key: key in exact or any(test(key) for test in tests)


def _normalize_path(path, who):
    if not isinstance(path, str):
        raise TypeError(f"{who}: expected path to be a str, got {type(path).__name__}")
    path = path.strip("/")
    return path + "/" if path else ""


def _common_prefix_holding(missing, path, names):
    """The path under which the file holds every missing key, if one does (None if not).

    Loading a trainer snapshot into its model misses ``predictor/W`` and has
    ``updater/model:main/predictor/W``: the answer is ``'updater/model:main/'``.
    """
    names = set(names)
    first = missing[0][len(path) :]
    for name in sorted(names):
        if name.endswith("/" + first) and name != missing[0]:
            prefix = name[: len(name) - len(first)]
            if all(prefix + key[len(path) :] in names for key in missing):
                return prefix
    return None


def _quoted(keys):
    return ", ".join(repr(k) for k in keys)


class _StoreDeserializer(Deserializer):
    """A deserializer reading a store (a file's flat key → array table) under ``path``.

    A store has ``name`` (the file, for messages), ``names()``, ``entry(key)``
    (an ``_Entry``, or None when absent), ``read(key)`` (a NumPy array, 0-d
    for scalars and strings, read in full; it raises one of ``_READ_ERRORS``
    on damaged data) and ``where(key)`` (the member or dataset, for
    messages). Subclasses pass theirs to ``_setup``.
    """

    _caller = None
    _staged = None

    def _setup(self, store, path, strict, ignore_names):
        self._store = store
        self.path = _normalize_path(path, self._who())
        self.strict = strict
        self.ignore_names = ignore_names
        self._ignored = _ignore_predicate(ignore_names, self._who())

    def _who(self):
        return self._caller or type(self).__name__

    def __getitem__(self, key):
        child = object.__new__(type(self))
        child.__dict__.update(self.__dict__)
        child.path = self.path + key.strip("/") + "/"
        return child

    def __call__(self, key, value):
        key = self.path + key.lstrip("/")
        if self._ignored(key):
            return value
        store = self._store
        entry = store.entry(key)
        if entry is None:
            if not self.strict:
                return value
            raise DeserializationError(
                f"{self._who()}: key {key!r} is missing from {store.name}",
                file=store.name,
                missing=[key],
            )
        if entry.kind == "damaged":
            raise self._unreadable_error([(key, entry.reason)])
        problem = _mismatch(entry, value)
        if problem is not None:
            raise self._mismatch_error(key, problem)
        if entry.kind == "none":
            return None
        staged = self._staged
        if staged is not None and key in staged:
            return _assign(value, staged[key])
        data, reason = _read_verified(store, key, entry, self._who())
        if reason is not None:
            raise self._unreadable_error([(key, reason)])
        if isinstance(value, _LazyParameter):
            data, problem = value.make(data)
            if problem is not None:
                raise self._mismatch_error(key, problem)
        return _assign(value, data)

    def _mismatch_error(self, key, problem):
        store = self._store
        return DeserializationError(
            f"{self._who()}: cannot load {key!r} from {store.name}: {problem}",
            file=store.name,
            mismatched=[(key, problem)],
        )

    def load(self, obj):
        """Check and read every value ``obj`` requests from the file, then load ``obj``.

        The first pass records the requested keys (``obj.serialize`` with a
        dry-run deserializer), checks them against the file's headers and
        reads each requested value in full into a staging table; the second
        pass (``obj.serialize(self)``) assigns the staged values.

        Raises:
            DeserializationError: before anything is changed, naming every
                missing, unexpected (strict mode only), mismatched and
                unreadable key.
            MemoryError: a value the file holds does not fit in memory (the
                message names the file and the key).
        """
        requests = []
        obj.serialize(_KeyRecorder(self, requests))
        self._check(requests)
        self._staged = self._stage(requests)
        try:
            obj.serialize(self)
        finally:
            self._staged = None

    def _stage(self, requests):
        store, staged, seen, unreadable, mismatched = self._store, {}, set(), [], []
        for key, value in requests:
            if key in seen:
                continue
            seen.add(key)
            entry = store.entry(key)
            if entry is None or entry.kind != "array":
                continue
            data, reason = _read_verified(store, key, entry, self._who())
            if reason is not None:
                unreadable.append((key, reason))
                staged.clear()
            elif isinstance(value, _LazyParameter) and not (unreadable or mismatched):
                # The array is made now, so that an initializer refusing the shape changes nothing.
                data, problem = value.make(data)
                if problem is not None:
                    mismatched.append((key, problem))
                    staged.clear()
                else:
                    staged[key] = data
            elif not (unreadable or mismatched):
                staged[key] = data
        if unreadable:
            raise self._unreadable_error(unreadable)
        if mismatched:
            raise self._error(mismatched=mismatched)
        return staged

    def _unreadable_error(self, unreadable):
        store = self._store
        lines = [
            f"{self._who()}: {store.name} is damaged (corrupt or truncated); nothing was loaded."
        ]
        lines.extend(f"  {key!r} ({store.where(key)}): {reason}" for key, reason in unreadable)
        return DeserializationError("\n".join(lines), file=store.name, unreadable=unreadable)

    def _check(self, requests):
        store, path = self._store, self.path
        requested, missing, mismatched, unreadable = set(), [], [], []
        for key, value in requests:
            if key in requested:
                continue
            requested.add(key)
            entry = store.entry(key)
            if entry is None:
                if self.strict:
                    missing.append(key)
                continue
            if entry.kind == "damaged":
                unreadable.append((key, entry.reason))
                continue
            problem = _mismatch(entry, value)
            if problem is not None:
                mismatched.append((key, problem))
        under_path = [k for k in store.names() if k.startswith(path)]
        unexpected = []
        if self.strict:
            unexpected = [k for k in under_path if k not in requested and not self._ignored(k)]
        if missing or unexpected or mismatched or unreadable:
            raise self._error(missing, unexpected, mismatched, unreadable, under_path)

    def _error(self, missing=(), unexpected=(), mismatched=(), unreadable=(), under_path=()):
        """The DeserializationError naming every key at fault, with hints where they help."""
        store, path = self._store, self.path
        lines = [
            f"{self._who()}: {store.name} does not match the target "
            f"(path={path!r}); nothing was loaded."
        ]
        if missing:
            lines.append(f"  missing from the file (expected by the target): {_quoted(missing)}")
            if path and not under_path:
                lines.append(f"    (no key in the file starts with {path!r})")
            prefix = _common_prefix_holding(missing, path, store.names())
            if prefix is not None:
                snapshot = " (a trainer snapshot)" if prefix.startswith("updater/") else ""
                lines.append(
                    f"    the file holds every one of them under {prefix!r}{snapshot}: "
                    f"load with path={prefix!r}"
                )
        if unexpected:
            lines.append(
                "  not expected by the target (in the file under the path): " + _quoted(unexpected)
            )
        if mismatched:
            lines.append("  mismatched:")
            lines.extend(f"    {key!r}: {problem}" for key, problem in mismatched)
        if unreadable:
            lines.append("  damaged (corrupt or truncated):")
            lines.extend(
                f"    {key!r} ({store.where(key)}): {reason}" for key, reason in unreadable
            )
        if missing or unexpected:
            lines.append(
                "  (strict=False skips missing and unexpected keys; ignore_names "
                "skips chosen ones)"
            )
        return DeserializationError(
            "\n".join(lines),
            file=store.name,
            missing=missing,
            unexpected=unexpected,
            mismatched=mismatched,
            unreadable=unreadable,
        )


def _read_verified(store, key, entry, who):
    """Read ``key`` in full; return ``(array, None)``, or ``(None, reason)`` if it is damaged."""
    try:
        data = store.read(key)
    except MemoryError as e:
        raise MemoryError(
            f"{who}: not enough memory to read {key!r} ({store.where(key)}, "
            f"{_describe_entry(entry)}) from {store.name}"
        ) from e
    except _READ_ERRORS as e:
        return None, f"cannot be read ({_cause(e)})"
    shape, dtype = tuple(data.shape), data.dtype
    if shape != entry.shape or dtype.kind != entry.dtype.kind:
        return None, (
            f"the header declares {_describe_entry(entry)}, the data read is "
            f"{_describe_array(dtype, shape)}"
        )
    return data, None


class _KeyRecorder(Deserializer):
    """The dry-run deserializer: records each requested key and the target's value.

    It changes nothing: values come back unchanged, except that a str value
    gets the stored string (see :attr:`Deserializer.dry_run`).
    """

    dry_run = True

    def __init__(self, owner, requests, path=None):
        self._owner = owner
        self._path = owner.path if path is None else path
        self._requests = requests

    def __getitem__(self, key):
        return _KeyRecorder(self._owner, self._requests, self._path + key.strip("/") + "/")

    def __call__(self, key, value):
        key = self._path + key.lstrip("/")
        owner = self._owner
        if owner._ignored(key):
            return value
        self._requests.append((key, value))
        if isinstance(value, str):
            store = owner._store
            entry = store.entry(key)
            if entry is not None and _mismatch(entry, value) is None:
                data, reason = _read_verified(store, key, entry, owner._who())
                if reason is not None:
                    raise owner._unreadable_error([(key, reason)])
                return str(data[()])
        return value


def stored_keys(deserializer):
    """The keys that a loading deserializer's file holds under its current path.

    This lets ``serialize`` treat keys as optional: state that dbr writes and
    Chainer's files lack (loaded only when present), or state of parts that
    the loading object does not have (a trainer's extensions). It answers the
    same in the checking pass (:attr:`Deserializer.dry_run`) and in the real
    load, so both request the same keys.

    Args:
        deserializer: a deserializer of :func:`load_npz`, :func:`load_hdf5`,
            :class:`NpzDeserializer` or :class:`HDF5Deserializer`, or a child
            of one (``deserializer['name']``).

    Returns:
        frozenset of str: the keys relative to the deserializer's path
        (``'_log'``, ``'_summary/_names'``, ...), or None for any other
        serializer, which cannot tell.
    """
    if isinstance(deserializer, _StoreDeserializer):
        path, store = deserializer.path, deserializer._store
    elif isinstance(deserializer, _KeyRecorder):
        path, store = deserializer._path, deserializer._owner._store
    else:
        return None
    start = len(path)
    return frozenset(k[start:] for k in store.names() if k.startswith(path))


def write_atomically(filename, write):
    """Write a file through ``write(temporary_path)``, then rename it onto ``filename``.

    The serializers, and the log and plot files of dbr-training, write through
    it, so that a crash never leaves a half-written file under its final name.

    The temporary file lies in the same directory, so the rename is atomic: a
    reader sees the old file or the complete new one, never a partial one; on
    any failure the temporary file is removed and ``filename`` is untouched.
    """
    path = os.fspath(filename)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    # os.open with 0o666 lets the umask decide the mode, as open() would for the final file.
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDWR)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _is_path(file):
    return isinstance(file, (str, os.PathLike))


def _file_name(file):
    """A short name of a path or file object, for messages."""
    if _is_path(file):
        return repr(os.fspath(file))
    name = getattr(file, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(file).__name__}>"
