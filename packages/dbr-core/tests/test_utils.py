"""dbr.core.utils: array sizes, temporary directories and keyword-argument parsing."""

import inspect
import os

import numpy
import pytest

from dbr.core import utils


@pytest.mark.parametrize(
    ("shape", "size"), [((), 1), ((0,), 0), ((2, 3, 4), 24), ([5], 5), ((numpy.int64(3), 2), 6)]
)
def test_size_of_shape_is_the_product_as_a_python_int(shape, size):
    result = utils.size_of_shape(shape)
    assert result == size and type(result) is int


def test_size_of_shape_refuses_bad_shapes_naming_them():
    with pytest.raises(
        TypeError, match=r"size_of_shape: expected shape to be a sequence of ints, got 3"
    ):
        utils.size_of_shape(3)
    with pytest.raises(TypeError, match=r"size_of_shape: expected shape .* got \(2\.0,\)"):
        utils.size_of_shape((2.0,))
    with pytest.raises(
        ValueError, match=r"size_of_shape: expected non-negative lengths, got shape \(2, -1\)"
    ):
        utils.size_of_shape((2, -1))


def test_tempdir_is_removed_with_its_contents():
    with utils.tempdir(prefix="dbr-test-") as path:
        assert os.path.basename(path).startswith("dbr-test-")
        with open(os.path.join(path, "f"), "w") as f:
            f.write("x")
    assert not os.path.exists(path)


def test_tempdir_is_removed_when_the_block_raises():
    with pytest.raises(RuntimeError), utils.tempdir() as path:
        raise RuntimeError
    assert not os.path.exists(path)


def test_parse_kwargs_takes_the_names_and_their_defaults():
    kwargs = {"train": False}
    assert utils.parse_kwargs(kwargs, ("train", True), ("debug", None)) == (False, None)
    assert kwargs == {}


def test_parse_kwargs_refuses_other_names():
    with pytest.raises(TypeError, match=r"got unexpected keyword argument\(s\) 'a', 'b'"):
        utils.parse_kwargs({"b": 1, "a": 2, "train": 0}, ("train", True))
    with pytest.raises(ValueError, match="use config.train"):
        utils.parse_kwargs({"test": True}, ("train", True), test="use config.train")


def test_check_unexpected_kwargs_and_assert_kwargs_empty():
    utils.check_unexpected_kwargs({"x": 1}, y="no y")
    with pytest.raises(ValueError, match="no y"):
        utils.check_unexpected_kwargs({"y": 1}, y="no y")
    utils.assert_kwargs_empty({})
    with pytest.raises(TypeError, match=r"'x'"):
        utils.assert_kwargs_empty({"x": 1})


def test_missing_attribute_suggests_the_closest_public_names():
    from dbr.core.utils import missing_attribute

    error = missing_attribute("pkg.mod", "PrintReprot", ["PrintReport", "ProgressBar", "_Print"])
    assert isinstance(error, AttributeError)
    assert str(error) == (
        "module 'pkg.mod' has no attribute 'PrintReprot'; did you mean 'PrintReport'?"
    )
    assert str(missing_attribute("m", "zzz", ["a", "_zzz"])) == "module 'm' has no attribute 'zzz'"


def test_a_misspelt_name_of_dbr_core_gets_a_suggestion():
    import dbr.core

    with pytest.raises(AttributeError, match="did you mean 'Variable'"):
        _ = dbr.core.Varaible


def test_docstring_tail_appends_shared_sections_as_if_written_in_place():
    # The tail is indented as the docstring's body: 8 spaces in this nested function.
    tail = "\n        Args:\n            x: the input.\n"

    @utils.docstring_tail(tail)
    def f(x):
        """Summary.

        More.
        """

    assert inspect.cleandoc(f.__doc__) == "Summary.\n\nMore.\n\nArgs:\n    x: the input."
