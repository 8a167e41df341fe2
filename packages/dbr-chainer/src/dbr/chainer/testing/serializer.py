"""``save_and_load``: round-trip an object's state through a serializer and a file."""

import os
import tempfile

__all__ = ["save_and_load", "save_and_load_hdf5", "save_and_load_npz"]


def save_and_load(src, dst, filename, saver, loader):
    """Save ``src`` with ``saver(filename, src)`` then load it into ``dst`` with ``loader``.

    ``filename`` is the name of a file in a fresh temporary directory, removed afterwards.
    """
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, filename)
        saver(path, src)
        loader(path, dst)


def save_and_load_npz(src, dst):
    """Copy ``src``'s state into ``dst`` through an NPZ file (``save_npz``, ``load_npz``)."""
    from dbr.core import serializers

    save_and_load(src, dst, "tmp.npz", serializers.save_npz, serializers.load_npz)


def save_and_load_hdf5(src, dst):
    """Copy ``src``'s state into ``dst`` through an HDF5 file (needs h5py)."""
    from dbr.core import serializers

    save_and_load(src, dst, "tmp.h5", serializers.save_hdf5, serializers.load_hdf5)
