"""GradientHardClipping: element-wise clipping of the gradients."""

import numpy

from dbr.training.optimizer import grad_or_none
from dbr.training.optimizer_hooks._util import check_real


class GradientHardClipping:
    """Optimizer/UpdateRule hook clipping each gradient element to ``[lower_bound, upper_bound]``.

    Args:
        lower_bound (float): the lower bound of the gradient values.
        upper_bound (float): the upper bound of the gradient values; at least
            ``lower_bound``.

    Attributes:
        lower_bound (float): the lower bound.
        upper_bound (float): the upper bound.
        timing (str): ``'pre'`` (the default) or ``'post'``.
        call_for_each_param (bool): True: called as ``hook(rule, param)``.
        name (str): ``'GradientHardClipping'``.
    """

    name = "GradientHardClipping"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, lower_bound, upper_bound):
        who = "GradientHardClipping"
        lower_bound = check_real(who, "lower_bound", lower_bound)
        upper_bound = check_real(who, "upper_bound", upper_bound)
        if lower_bound > upper_bound:
            raise ValueError(
                f"{who}: lower_bound must not exceed upper_bound, got "
                f"lower_bound={lower_bound!r}, upper_bound={upper_bound!r}"
            )
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def __call__(self, rule, param):
        """Clip ``param.grad`` in place."""
        g = grad_or_none(param)
        if g is None:
            return
        if type(g) is numpy.ndarray:
            numpy.clip(g, self.lower_bound, self.upper_bound, out=g)
            return
        with param.device:
            param.xp.clip(g, self.lower_bound, self.upper_bound, out=g)
