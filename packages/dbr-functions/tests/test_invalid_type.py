"""dbr.functions._invalid_type: the InvalidType of a check made outside check_type_forward."""

from dbr.core.type_check import InvalidType
from dbr.functions._invalid_type import invalid_type


def test_invalid_type_words_the_message_as_a_failed_forward_type_check():
    error = invalid_type("crf1d", "cost.shape == (K, K)", "cost.shape == (2, 3)")
    assert isinstance(error, InvalidType)
    assert (error.expect, error.actual) == ("cost.shape == (K, K)", "cost.shape == (2, 3)")
    assert str(error) == (
        "Invalid operation is performed in: crf1d (Forward)\n\n"
        "Expect: cost.shape == (K, K)\nActual: cost.shape == (2, 3)"
    )


def test_invalid_type_without_forward_names_the_function_alone():
    error = invalid_type("ceil", "x.dtype.kind in 'fiu'", "x.dtype.kind == 'b'", forward=False)
    assert str(error) == (
        "Invalid operation is performed in: ceil\n\n"
        "Expect: x.dtype.kind in 'fiu'\nActual: x.dtype.kind == 'b'"
    )
