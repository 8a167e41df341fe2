"""Loading into lazily initialised parameters: what they accept; refused loads change nothing.

A lazy parameter (``Parameter(initializer)`` without a shape, as in
``Linear(None, 5)``) takes its shape from the file. It accepts exactly the
dtypes an initialised parameter of its dtype accepts, and a stored shape its
initializer cannot make is refused by name; either way the target, the lazy
parameter included, is left as it was.
"""

import zipfile

import numpy
import numpy.lib.format as npy_format
import pytest

from dbr.core import Link, Parameter, initializers
from dbr.core.serializers import DeserializationError, load_hdf5, load_npz, save_hdf5

try:
    import h5py
except ImportError:
    h5py = None

needs_h5py = pytest.mark.skipif(
    h5py is None, reason='h5py is not installed (pip install "dbr-core[hdf5]")'
)


class LazyLinear(Link):
    """The parameters of ``Linear(None, 5)``: ``W`` lazy (LeCunNormal), ``b`` of shape (5,)."""

    def __init__(self, initializer=None):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(initializer or initializers.LeCunNormal())
            self.b = Parameter(numpy.zeros(5, numpy.float32))


def write_npz(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in members.items():
            with archive.open(name + ".npy", "w") as member:
                npy_format.write_array(member, array, allow_pickle=False)


def assert_refused_unchanged(load, path, link):
    """``load(path, link)`` raises naming the file and 'W'; ``link`` is as it was."""
    with pytest.raises(DeserializationError) as info:
        load(path, link)
    message = str(info.value)
    assert str(path) in message and "'W'" in message
    assert [key for key, _ in info.value.mismatched] == ["W"]
    assert link.W.array is None
    numpy.testing.assert_array_equal(link.b.array, numpy.zeros(5, numpy.float32))
    return message


# dtypes an initialised float32 parameter refuses; (dtype, a fragment naming it)
REFUSED_DTYPES = [
    pytest.param("V4", "|V4", id="void"),
    pytest.param("c8", "complex64", id="complex"),
    pytest.param([("a", "<f4")], "[('a', '<f4')]", id="structured"),
    pytest.param("U3", "string", id="string"),
    pytest.param("m8[s]", "timedelta64[s]", id="timedelta"),
]


@pytest.mark.parametrize(("dtype", "named"), REFUSED_DTYPES)
def test_npz_lazy_parameter_refuses_what_an_initialised_one_refuses(tmp_path, dtype, named):
    path = tmp_path / "model.npz"
    write_npz(path, {"W": numpy.ones((5, 4), dtype), "b": numpy.ones(5, numpy.float32)})
    initialised = LazyLinear()
    initialised.W.initialize((5, 4))
    with pytest.raises(DeserializationError, match="'W'"):
        load_npz(path, initialised)
    message = assert_refused_unchanged(load_npz, path, LazyLinear())
    assert named in message and "float32" in message


@pytest.mark.parametrize("dtype", ["f8", "f2", "i4", "bool"])
def test_npz_lazy_parameter_takes_the_dtypes_an_initialised_one_takes(tmp_path, dtype):
    path = tmp_path / "model.npz"
    stored = numpy.arange(20).reshape(5, 4).astype(dtype)
    write_npz(path, {"W": stored, "b": numpy.ones(5, numpy.float32)})
    link = LazyLinear()
    load_npz(path, link)
    assert link.W.dtype == numpy.float32
    numpy.testing.assert_array_equal(link.W.array, stored.astype(numpy.float32))
    numpy.testing.assert_array_equal(link.b.array, numpy.ones(5))


def test_lazy_parameter_load_draws_the_initializer_once_like_initialize(tmp_path):
    # Loading keeps Chainer's order: the initializer draws once (then the data overwrites it).
    path = tmp_path / "model.npz"
    write_npz(path, {"W": numpy.ones((5, 4), "f4"), "b": numpy.ones(5, numpy.float32)})
    state = numpy.random.get_state()
    try:
        load_npz(path, LazyLinear())
        after_load = numpy.random.random()
        numpy.random.set_state(state)
        LazyLinear().W.initialize((5, 4))
        assert numpy.random.random() == after_load
    finally:
        numpy.random.set_state(state)


@needs_h5py
def test_hdf5_lazy_parameter_refuses_complex(tmp_path):
    path = tmp_path / "model.h5"
    save_hdf5(path, {"W": numpy.ones((5, 4), "c8") * 1j, "b": numpy.ones(5, numpy.float32)})
    message = assert_refused_unchanged(load_hdf5, path, LazyLinear())
    assert "complex64" in message


@needs_h5py
def test_hdf5_lazy_parameter_refuses_a_string(tmp_path):
    path = tmp_path / "model.h5"
    save_hdf5(path, {"W": "abc", "b": numpy.ones(5, numpy.float32)})
    assert_refused_unchanged(load_hdf5, path, LazyLinear())


# -- item 7: a stored shape the lazy parameter's initializer cannot make -------


@pytest.mark.parametrize("shape", [(5,), ()], ids=["1d", "0d"])
def test_npz_shape_a_lazy_parameter_cannot_take_is_named(tmp_path, shape):
    path = tmp_path / "model.npz"
    write_npz(path, {"W": numpy.ones(shape, "f4"), "b": numpy.ones(5, numpy.float32)})
    message = assert_refused_unchanged(load_npz, path, LazyLinear())
    assert f"shape {shape}" in message
    assert "uninitialized" in message and "LeCunNormal" in message


@needs_h5py
def test_hdf5_shape_a_lazy_parameter_cannot_take_is_named(tmp_path):
    path = tmp_path / "model.h5"
    save_hdf5(path, {"W": numpy.ones(5, "f4"), "b": numpy.ones(5, numpy.float32)})
    message = assert_refused_unchanged(load_hdf5, path, LazyLinear())
    assert "shape (5,)" in message and "LeCunNormal" in message


def test_constant_initializer_names_both_shapes(tmp_path):
    path = tmp_path / "model.npz"
    write_npz(path, {"W": numpy.ones((4, 5), "f4"), "b": numpy.ones(5, numpy.float32)})
    link = LazyLinear(initializers.Constant(numpy.zeros((5, 4), numpy.float32)))
    message = assert_refused_unchanged(load_npz, path, link)
    assert "(4, 5)" in message and "(5, 4)" in message
