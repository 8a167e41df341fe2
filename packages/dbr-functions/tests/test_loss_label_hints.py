"""Labels of the wrong kind get a hint saying what labels must be and what was given."""

import numpy
import pytest

import dbr.functions as F
from dbr.core.type_check import InvalidType

X = numpy.zeros((4, 3), numpy.float32)


@pytest.mark.parametrize(
    "function, t, expected",
    [
        (F.softmax_cross_entropy, numpy.zeros(4, numpy.float32),
         "t must hold integer class indices (int32) of shape x.shape[:1] + x.shape[2:], or "
         "soft labels"),
        (F.sigmoid_cross_entropy, numpy.zeros((4, 3), numpy.float32),
         "t must hold integer labels (int32: 0, 1, or -1 to ignore) of x's shape"),
        (F.accuracy, numpy.zeros(4, numpy.float32),
         "t must hold integer class indices (int32) of shape y.shape[:1] + y.shape[2:]"),
        (F.hinge, numpy.zeros(4, numpy.float64),
         "t must hold integer class indices (int32) of shape (x.shape[0],)"),
        (F.softmax_cross_entropy, numpy.zeros((4, 1), numpy.int32),
         "t must hold integer class indices"),
    ],
)  # fmt: skip
def test_wrong_labels_name_what_labels_must_be_and_what_was_given(function, t, expected):
    with pytest.raises(InvalidType) as info:
        function(X, t)
    message = str(info.value)
    assert expected in message
    assert f"got t of dtype {t.dtype} and shape {t.shape}" in message


def test_right_labels_still_pass():
    t = numpy.array([0, 2, 1, 0], numpy.int32)
    assert F.softmax_cross_entropy(X, t).shape == ()
    assert F.accuracy(X, t).shape == ()
