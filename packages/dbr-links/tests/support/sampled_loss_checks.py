"""Checks shared by the tests of the sampled losses (BlackOut, NegativeSampling)."""

import numpy

from dbr.core import InvalidType

TARGETS = numpy.array([0, 1], numpy.int32)


def check_to_device_moves_sampler(link):
    """``to_device`` returns ``link`` itself and moves its sampler along."""
    assert link.to_device("@numpy") is link
    assert link.sampler.device == link.device


def bad_forward_inputs(function_label):
    """``bad_input_test`` cases for a 3-wide float32 loss link: ``x`` of a wrong dtype or width.

    ``function_label`` is the name the dtype error message gives the function.
    """
    return [
        (
            (numpy.ones((2, 3), numpy.float64), TARGETS),
            InvalidType,
            (function_label, "W.dtype == x.dtype"),
        ),
        ((numpy.ones((2, 4), numpy.float32), TARGETS), InvalidType, "W.shape[1] == x.shape[1]"),
    ]
