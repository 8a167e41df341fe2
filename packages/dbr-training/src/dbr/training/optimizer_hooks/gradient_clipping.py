"""GradientClipping: rescaling all gradients to a maximum global L2 norm."""

import numpy

from dbr.core import backend
from dbr.training.optimizer_hooks._util import check_real


def _squared_norm(param):
    g = param.grad
    xp = backend.get_array_module(g)
    flat = g.ravel()
    if flat.dtype == numpy.float16:
        flat = flat.astype(numpy.float32)
    return xp.vdot(flat, flat)


class GradientClipping:
    """Optimizer hook scaling all gradients so that their global L2 norm is at most ``threshold``.

    The norm is taken over the gradients of every parameter of the
    optimizer's target together. When it exceeds ``threshold``, every
    gradient is multiplied by ``threshold / norm``; otherwise none changes.
    Parameters without a gradient are skipped.

    Args:
        threshold (float): the largest allowed L2 norm (positive).

    Attributes:
        threshold (float): the L2 norm threshold.
        timing (str): ``'pre'`` (the default) or ``'post'``.
        call_for_each_param (bool): False: the optimizer calls the hook once
            per update as ``hook(optimizer)``.
        name (str): ``'GradientClipping'``.
    """

    name = "GradientClipping"
    call_for_each_param = False
    timing = "pre"

    def __init__(self, threshold):
        self.threshold = check_real("GradientClipping", "threshold", threshold, positive=True)

    def __call__(self, opt):
        """Rescale the gradients of ``opt.target``'s parameters in place."""
        params = [p for p in opt.target.params(False) if p.grad is not None]
        if not params:
            return
        per_device = {}
        for param in params:
            device = param.device
            sq = _squared_norm(param)
            per_device[device] = per_device[device] + sq if device in per_device else sq
        if len(per_device) == 1:
            ((device, sqnorm),) = per_device.items()
            xp = device.xp
            if xp is numpy:
                norm = numpy.sqrt(sqnorm)
                if norm <= self.threshold:
                    return
                rate = self.threshold / norm
            else:
                # Stays on the device: no host synchronisation to decide.
                rate = xp.minimum(self.threshold / xp.sqrt(sqnorm), 1.0)
        else:
            norm = numpy.sqrt(sum(float(sq) for sq in per_device.values()))
            if norm <= self.threshold:
                return
            rate = self.threshold / norm
        for param in params:
            g = param.grad
            g *= rate
