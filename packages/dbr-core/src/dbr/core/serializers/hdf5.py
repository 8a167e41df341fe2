"""HDF5 serialization, compatible with Chainer v7's ``chainer.serializers.hdf5``.

The object hierarchy maps to HDF5 groups: key ``'predictor/l1/W'`` is dataset
``W`` in group ``/predictor/l1``. Arrays of more than one element are
gzip-compressed; None is an empty dataset (``h5py.Empty('f')``), as in
Chainer. Strings, which Chainer could not store in HDF5, are stored as UTF-8
string datasets. h5py is imported only when HDF5 is used; install it with
``pip install "dbr-core[hdf5]"``.

Every dataset dbr writes carries checksums that loading verifies: HDF5's
fletcher32 filter on each chunk where the dataset can be chunked (arrays of
one element or more; scalars and strings cannot), and on every dataset a
CRC-32 of its dtype, shape and data in the attribute ``dbr_crc32``, which
also catches damage to what HDF5 does not checksum in the file layout Chainer
reads (the dtype, the filters, the chunk index). Chainer's files have
neither and load as before. Loading follows hard and soft links inside the
file and refuses external links, which would read another file.
"""

import math
import zlib

import numpy

from dbr.core import backend
from dbr.core.serializers import base
from dbr.core.serializers.base import DeserializationError, Serializer, write_atomically


def _import_h5py(who):
    try:
        import h5py
    except ImportError as e:
        raise RuntimeError(
            f"{who} needs h5py, which is not importable ({e}); install it with: "
            f'pip install "dbr-core[hdf5]"'
        ) from e
    return h5py


def __getattr__(name):
    # Chainer's ``serializers.hdf5._available``: whether h5py can be imported,
    # asked anew each time (h5py is imported only when HDF5 is used).
    if name == "_available":
        try:
            import h5py  # noqa: F401
        except ImportError:
            return False
        return True
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class HDF5Serializer(Serializer):
    """Serializer into an HDF5 group; ``s['l1']`` gives the serializer of subgroup ``l1``.

    Args:
        group: an ``h5py.Group`` (or ``h5py.File``) to write into.
        compression: the gzip level (0-9) for datasets of more than one element.
    """

    def __init__(self, group, compression=4):
        self._h5py = _import_h5py("HDF5Serializer")
        self.group = group
        self.compression = compression

    def __getitem__(self, key):
        return HDF5Serializer(self.group.require_group(key.strip("/")), self.compression)

    def __call__(self, key, value):
        _write_dataset(
            self._h5py, self.group, key.lstrip("/"), value, self.compression, "HDF5Serializer"
        )
        return value


_DIGEST = "dbr_crc32"
_MAX_SOFT_LINKS = 32


def _digest(value):
    """The CRC-32 stored for a str or an array (of its little-endian dtype, shape and data)."""
    if isinstance(value, str):
        return zlib.crc32(b"str:" + value.encode("utf-8", "surrogatepass"))
    array = numpy.ascontiguousarray(value)
    array = array.astype(array.dtype.newbyteorder("<"), copy=False)
    header = zlib.crc32(f"{array.dtype.str}{array.shape}".encode())
    return zlib.crc32(array.reshape(-1).view(numpy.uint8), header)


def _write_dataset(h5py, group, key, value, compression, who):
    if base._is_stored_none(value):
        if h5py.version.version_tuple < (2, 7, 0):
            raise RuntimeError(
                f"{who}: cannot store None at {key!r}: it is an empty dataset, which "
                f"needs h5py>=2.7.0 (h5py.Empty); h5py {h5py.version.version} is installed"
            )
        group.create_dataset(key, data=h5py.Empty("f"))
        return
    array = value if isinstance(value, str) else numpy.asarray(backend.to_cpu(value))
    if isinstance(array, str) or (array.dtype.kind == "U" and array.shape == ()):
        text = str(array)
        dataset = group.create_dataset(key, data=text, dtype=h5py.string_dtype())
        dataset.attrs[_DIGEST] = numpy.uint32(_digest(text))
        return
    if array.dtype.hasobject or array.dtype.kind not in "biufc":
        raise TypeError(
            f"{who}: cannot store {key!r}: HDF5 holds numeric arrays, scalars, "
            f"strings and None here, got {type(value).__name__} of dtype "
            f"{array.dtype}"
        )
    chunkable = array.ndim > 0 and array.size > 0
    dataset = group.create_dataset(
        key,
        data=array,
        compression=None if array.size <= 1 else compression,
        fletcher32=chunkable,
    )
    dataset.attrs[_DIGEST] = numpy.uint32(_digest(array))


def save_hdf5(filename, obj, compression=4):
    """Save ``obj`` (an object with ``serialize``, or a dict of arrays) to an HDF5 file.

    A path is written atomically (a temporary file in the same directory,
    renamed over ``filename`` once complete), so a failure leaves no partial
    file and an existing file untouched. A binary file object is written
    directly.

    Args:
        filename: a path (str or os.PathLike) or a binary file object.
        obj: the object to save, or a dict ``{key: array}`` saved as is
            (such as a ``DictionarySerializer``'s target: a value None, or
            the ``numpy.asarray(None)`` that it stores for None, is stored
            as None).
        compression: the gzip level for datasets of more than one element.
    """
    h5py = _import_h5py("save_hdf5")

    def write(dest):
        with h5py.File(dest, "w") as f:
            if isinstance(obj, dict):
                for key, value in obj.items():
                    _write_dataset(h5py, f, key.strip("/"), value, compression, "save_hdf5")
            else:
                HDF5Serializer(f, compression=compression).save(obj)

    if base._is_path(filename):
        write_atomically(filename, write)
    else:
        write(filename)


class _ExternalLink(Exception):
    """A key leads through an external link (the message says which, and to what)."""


# h5py raises TypeError for a datatype NumPy has no equivalent of (a damaged one,
# say), and IndexError for a damaged filter description.
_H5_ERRORS = base._READ_ERRORS + (TypeError, IndexError)


def _text(name):
    # h5py answers a name that is not UTF-8 (a damaged one) as bytes.
    return name if isinstance(name, str) else name.decode("utf-8", "backslashreplace")


class _Hdf5Store:
    """The key table of an HDF5 group: every dataset below it, by '/'-joined relative path."""

    who = "HDF5Deserializer"

    def __init__(self, h5py, group, name):
        self._h5py = h5py
        self.group = group
        self.name = name
        self._keys = None

    def names(self):
        if self._keys is None:
            keys = []
            try:
                self.group.visititems(
                    lambda key, obj: (
                        keys.append(_text(key)) if isinstance(obj, self._h5py.Dataset) else None
                    )
                )
            except _H5_ERRORS as e:
                reason = (
                    f"the datasets under group {self.group.name!r} cannot be listed "
                    f"({base._cause(e)})"
                )
                if keys:
                    reason += f"; the last one listed is {keys[-1]!r}"
                raise DeserializationError(
                    f"{self.who}: {self.name} is damaged (corrupt or truncated): {reason}; "
                    f"nothing was loaded.",
                    file=self.name,
                    unreadable=[(None, reason)],
                ) from e
            self._keys = keys
        return self._keys

    def where(self, key):
        return f"dataset {key!r} of group {self.group.name!r}"

    def _dataset(self, key):
        """The dataset at ``key``, or None; links are followed only inside this file.

        Each step is looked at as a link before it is taken, so that HDF5
        never opens another file: an external link raises ``_ExternalLink``.
        """
        h5py = self._h5py
        obj, parts, hops = self.group, key.split("/"), 0
        while parts:
            part = parts.pop(0)
            if part in ("", "."):
                continue
            if not isinstance(obj, h5py.Group):
                return None
            link = obj.get(part, getlink=True)
            if link is None:
                return None
            if isinstance(link, h5py.ExternalLink):
                where = f"{obj.name.rstrip('/')}/{part}"
                raise _ExternalLink(
                    f"{where!r} is an external link to {link.path!r} in the file "
                    f"{link.filename!r}; dbr does not follow links to other files"
                )
            if isinstance(link, h5py.SoftLink):
                hops += 1
                if hops > _MAX_SOFT_LINKS:
                    raise RuntimeError(f"more than {_MAX_SOFT_LINKS} soft links in a row")
                if not isinstance(link.path, str):
                    raise RuntimeError(f"a soft link's target is not text: {link.path!r}")
                if link.path.startswith("/"):
                    obj = obj.file["/"]
                parts[:0] = link.path.split("/")
                continue
            obj = obj.get(part)
        return obj if isinstance(obj, h5py.Dataset) else None

    def entry(self, key):
        try:
            dataset = self._dataset(key)
        except _ExternalLink as e:
            return base._refused_entry(str(e))
        except _H5_ERRORS as e:
            # get() answers None for an absent name: an error is a link that cannot be followed.
            return base._damaged_entry(f"the link cannot be followed ({base._cause(e)})")
        if dataset is None:
            return None
        try:
            return self._inspect(dataset)
        except _H5_ERRORS as e:
            return base._damaged_entry(f"its header cannot be read ({base._cause(e)})")

    def _inspect(self, dataset):
        if dataset.shape is None:
            return base._NONE_ENTRY
        if self._h5py.check_string_dtype(dataset.dtype) is not None:
            return base._array_entry(dataset.shape, numpy.dtype(str))
        if dataset.dtype.kind not in "biufc":
            return base._refused_entry(
                f"the dataset has dtype {dataset.dtype}, which dbr does not load"
            )
        missing = self._missing_storage(dataset)
        if missing is not None:
            return base._damaged_entry(missing)
        return base._array_entry(dataset.shape, dataset.dtype)

    def _missing_storage(self, dataset):
        """Why ``dataset`` lacks the data its shape declares, or None.

        HDF5 answers never-written storage with fill values, so a dataset
        declaring a huge shape over no data would be materialised in full.
        """
        h5d = self._h5py.h5d
        dsid = dataset.id
        declared = math.prod(dataset.shape) * dataset.dtype.itemsize
        layout = dsid.get_create_plist().get_layout()
        if layout == h5d.CHUNKED:
            expected = math.prod(-(-n // c) for n, c in zip(dataset.shape, dataset.chunks))
            written = dsid.get_num_chunks()
            if written < expected:
                return (
                    f"the dataset declares {base._describe_array(dataset.dtype, dataset.shape)} "
                    f"({declared} bytes) in {expected} chunks, the file holds {written}"
                )
        elif layout == h5d.CONTIGUOUS and declared and dsid.get_storage_size() < declared:
            return (
                f"the dataset declares {base._describe_array(dataset.dtype, dataset.shape)} "
                f"({declared} bytes), the file holds {dsid.get_storage_size()} bytes of it"
            )
        return None

    def read(self, key):
        try:
            return self._read_verified(key)
        except (TypeError, IndexError, _ExternalLink) as e:
            # What _read_verified does not take for damage: h5py's answers to a broken type.
            raise ValueError(base._cause(e)) from e

    def _read_verified(self, key):
        dataset = self._dataset(key)
        if self._h5py.check_string_dtype(dataset.dtype) is not None:
            text = dataset.asstr()[()]
            data, digest = numpy.asarray(text), _digest(text)
        else:
            data = self._read_array(dataset)
            digest = _digest(data)
        stored = dataset.attrs.get(_DIGEST)
        if stored is not None:
            stored = numpy.asarray(stored)
            if stored.shape != () or stored.dtype.kind not in "iu":
                raise ValueError(f"its checksum attribute {_DIGEST} is not an integer: {stored!r}")
            if int(stored) != digest:
                raise ValueError(
                    f"the data fails its checksum: {_DIGEST} is {int(stored)}, "
                    f"the data read gives {digest}"
                )
        return data

    def _read_array(self, dataset):
        try:
            return numpy.asarray(dataset[()])
        except OSError as e:
            if not dataset.fletcher32:
                raise
            raise OSError(
                f"{e}; a chunk fails its fletcher32 checksum or cannot be decompressed"
            ) from e


class HDF5Deserializer(base._StoreDeserializer):
    """Deserializer from an HDF5 group, as written by :func:`save_hdf5` or Chainer.

    Args:
        group: the ``h5py.Group`` (or ``h5py.File``) to read from.
        strict: if True, a key the target requests and the file lacks is an
            error and so, in :meth:`load`, is a dataset under ``path`` that the
            target does not request; if False both are skipped.
        ignore_names: a full key (str), a predicate on full keys (callable),
            or a list of them: keys to skip both ways.
        path: the key prefix (a subgroup path such as ``'updater/model:main/'``)
            to load from.

    Shape, dtype and type mismatches are errors whatever ``strict`` is;
    :meth:`load` checks every key before changing the target.
    """

    def __init__(self, group, strict=True, ignore_names=None, path=""):
        h5py = _import_h5py("HDF5Deserializer")
        self._root = group
        name = f"{group.file.filename!r} (group {group.name!r})"
        self._setup(_Hdf5Store(h5py, group, name), path, strict, ignore_names)

    @property
    def group(self):
        """The h5py group this deserializer reads: ``d['x'].group`` is the subgroup ``x``.

        None when the file has no group at this deserializer's path.
        """
        if not self.path:
            return self._root
        group = self._root.get(self.path.rstrip("/"))
        return group if isinstance(group, self._store._h5py.Group) else None


def load_hdf5(filename, obj, path="", strict=True, ignore_names=None):
    """Load ``obj`` from an HDF5 file written by :func:`save_hdf5` or by Chainer.

    Every key that ``obj.serialize`` requests is checked against the file,
    then every requested value is read in full (decompressing every chunk),
    before anything is set; any problem raises one
    :class:`~dbr.core.serializers.DeserializationError` naming the file and
    every missing, unexpected, mismatched and damaged key, and leaves ``obj``
    untouched. A file that is not a readable HDF5 file raises it too, with
    ``unreadable`` holding ``(None, reason)``.

    Args:
        filename: a path or a binary file object.
        obj: the object to load into (it must have ``serialize``).
        path: the key prefix to load from.
        strict: whether missing and unexpected keys are errors.
        ignore_names: keys to skip: a full key, a predicate, or a list of them.
    """
    h5py = _import_h5py("load_hdf5")
    base._normalize_path(path, "load_hdf5")
    base._ignore_predicate(ignore_names, "load_hdf5")
    name = base._file_name(filename)
    try:
        f = h5py.File(filename, "r")
    except base._READ_ERRORS as e:
        reason = f"it is not a readable HDF5 file ({base._cause(e)})"
        if _starts_with(filename, (b"PK\x03\x04", b"PK\x05\x06")):
            reason = "it is an NPZ archive, not an HDF5 file (load it with load_npz)"
        raise DeserializationError(
            f"load_hdf5: cannot read {name}: {reason}; nothing was loaded.",
            file=name,
            unreadable=[(None, reason)],
        ) from e
    with f:
        deserializer = HDF5Deserializer(f, strict=strict, ignore_names=ignore_names, path=path)
        deserializer._caller = "load_hdf5"
        deserializer._store.name = name
        deserializer._store.who = "load_hdf5"
        deserializer.load(obj)


def _starts_with(filename, prefixes):
    if not base._is_path(filename):
        return False
    try:
        with open(filename, "rb") as f:
            return f.read(4).startswith(prefixes)
    except OSError:
        return False


__all__ = ["HDF5Deserializer", "HDF5Serializer", "load_hdf5", "save_hdf5"]
