"""Saving and loading objects (links, optimizers, trainers) in NPZ and HDF5 files.

Files are key-compatible with Chainer v7's: ``save_npz``/``load_npz`` and
``save_hdf5``/``load_hdf5`` read what Chainer wrote and write what Chainer
reads. Loading checks every key, shape and type before changing anything and
never unpickles; saving to a path is atomic.
"""

from dbr.core.serializers.base import (
    AbstractSerializer,
    DeserializationError,
    Deserializer,
    Serializer,
    stored_keys,
    write_atomically,
)
from dbr.core.serializers.hdf5 import HDF5Deserializer, HDF5Serializer, load_hdf5, save_hdf5
from dbr.core.serializers.npz import DictionarySerializer, NpzDeserializer, load_npz, save_npz

__all__ = [
    "AbstractSerializer",
    "DeserializationError",
    "Deserializer",
    "DictionarySerializer",
    "HDF5Deserializer",
    "HDF5Serializer",
    "NpzDeserializer",
    "Serializer",
    "load_hdf5",
    "load_npz",
    "save_hdf5",
    "save_npz",
    "stored_keys",
    "write_atomically",
]
