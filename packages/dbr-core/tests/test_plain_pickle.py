"""dbr.core.serializers.plain_pickle: a pickle's plain data, read without unpickling."""

import pickle

import numpy
import pytest

from dbr.core.serializers.plain_pickle import read_plain_pickle


class Payload:
    """Unpickling this would run ``os.system``."""

    def __reduce__(self):
        import os

        return (os.system, ("echo unpickled",))


@pytest.mark.parametrize("protocol", [2, 3, 4])
def test_plain_data_and_arrays_of_numbers_come_back(protocol):
    batch = {
        b"batch_label": b"training batch 1 of 5",
        "labels": [3, 1, 4],
        "data": numpy.arange(12, dtype=numpy.uint8).reshape(3, 4),
        "nested": ({"x": 1.5, "y": None, "z": True}, ["a", -7, 2**70]),
    }
    value = read_plain_pickle(pickle.dumps(batch, protocol=protocol), "batch")
    assert value.keys() == batch.keys()
    numpy.testing.assert_array_equal(value["data"], batch["data"])
    assert value["data"].dtype == numpy.uint8
    assert value["labels"] == [3, 1, 4]
    assert value["nested"] == batch["nested"]


def test_a_big_endian_fortran_array_keeps_its_order_and_values():
    array = numpy.asfortranarray(numpy.arange(6, dtype=">f4").reshape(2, 3))
    value = read_plain_pickle(pickle.dumps(array, protocol=2), "f")
    numpy.testing.assert_array_equal(value, array)
    assert value.dtype == numpy.dtype(">f4")


def test_object_arrays_only_where_the_caller_allows_them():
    payload = pickle.dumps(numpy.asarray(None), protocol=3)
    with pytest.raises(ValueError, match=r"npz member: expected an array of dtype kind in 'biuf'"):
        read_plain_pickle(payload, "npz member")
    value = read_plain_pickle(payload, "npz member", array_kinds="O")
    assert value.shape == () and value.dtype == object and value[()] is None


def test_a_pickle_that_would_run_code_is_refused_naming_what_it_calls(capfd):
    with pytest.raises(ValueError, match=r"x\.pkl: the pickle refers to (posix|os)\.system"):
        read_plain_pickle(pickle.dumps({"data": Payload()}), "x.pkl")
    assert "unpickled" not in capfd.readouterr().out


def test_an_array_whose_data_is_short_is_refused():
    payload = pickle.dumps(numpy.zeros(4, numpy.float32), protocol=3)
    data = numpy.zeros(4, numpy.float32).tobytes()
    # SHORT_BINBYTES ('C'), its one-byte length, the bytes: 12 of the 16 the array needs.
    damaged = payload.replace(b"C\x10" + data, b"C\x0c" + data[:-4])
    assert damaged != payload
    with pytest.raises(
        ValueError, match=r"short: an array of shape \(4,\) and dtype float32 needs 16"
    ):
        read_plain_pickle(damaged, "short")


def test_a_truncated_pickle_is_refused():
    payload = pickle.dumps({"a": [1, 2, 3]})
    with pytest.raises(ValueError, match="t: (truncated|malformed) pickle"):
        read_plain_pickle(payload[:-1], "t")
