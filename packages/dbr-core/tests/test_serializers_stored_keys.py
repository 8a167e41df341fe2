"""stored_keys: what a loading deserializer's file holds under its path, in both passes."""

import numpy
import pytest

from dbr.core.serializers import (
    DictionarySerializer,
    NpzDeserializer,
    load_hdf5,
    load_npz,
    stored_keys,
)

STORED = {
    "a": numpy.zeros(2),
    "child/x": numpy.ones(1),
    "child/deeper/y": numpy.array(3),
    "children/z": numpy.array(1.0),
}


class Probe:
    """Requests every stored key, and records what stored_keys says in each pass."""

    def __init__(self):
        self.seen = []

    def serialize(self, serializer):
        child = serializer["child"]
        self.seen.append((serializer.dry_run, stored_keys(serializer), stored_keys(child)))
        serializer("a", None)
        child("x", None)
        child("deeper/y", None)
        serializer("children/z", None)


EXPECTED_TOP = frozenset(STORED)
EXPECTED_CHILD = frozenset({"x", "deeper/y"})


def test_npz_both_passes(tmp_path):
    path = tmp_path / "f.npz"
    numpy.savez(path, **STORED)
    probe = Probe()
    load_npz(path, probe)
    assert probe.seen == [
        (True, EXPECTED_TOP, EXPECTED_CHILD),
        (False, EXPECTED_TOP, EXPECTED_CHILD),
    ]


def test_npz_under_a_path(tmp_path):
    path = tmp_path / "f.npz"
    numpy.savez(path, **{"outer/" + k: v for k, v in STORED.items()})
    probe = Probe()
    load_npz(path, probe, path="outer")
    assert probe.seen[1] == (False, EXPECTED_TOP, EXPECTED_CHILD)


def test_hdf5_both_passes(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        for key, value in STORED.items():
            f.create_dataset(key, data=value)
    probe = Probe()
    load_hdf5(path, probe)
    assert probe.seen == [
        (True, EXPECTED_TOP, EXPECTED_CHILD),
        (False, EXPECTED_TOP, EXPECTED_CHILD),
    ]


def test_dict_deserializer_and_serializers():
    assert stored_keys(NpzDeserializer(dict(STORED))["child"]) == EXPECTED_CHILD
    assert stored_keys(DictionarySerializer()) is None
    assert stored_keys(object()) is None
