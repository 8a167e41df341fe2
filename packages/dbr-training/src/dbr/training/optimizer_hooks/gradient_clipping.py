"""GradientClipping: rescaling all gradients to a maximum global L2 norm."""

import numpy

from dbr.training.optimizer import gpu_elementwise
from dbr.training.optimizer_hooks._util import accumulation_dtype, check_real, squared_sum

# sqnorm is the 0-d global squared norm on the device: no host synchronisation decides.
_CLIP_TO_NORM_ELEMENTWISE = {
    "in_params": "S sqnorm, float64 threshold",
    "out_params": "T g",
    "operation": (
        "S norm = sqrt(sqnorm);if (!(norm <= (S)threshold)) g = (S)g * ((S)threshold / norm)"
    ),
    "name": "dbr_clip_to_norm",
}


def _squared_norm(g):
    flat = g.ravel()
    if flat.dtype == numpy.float16:
        flat = flat.astype(numpy.float32)
    return numpy.vdot(flat, flat)


class GradientClipping:
    """Optimizer hook scaling all gradients so that their global L2 norm is at most ``threshold``.

    The norm is taken over the gradients of every parameter of the
    optimizer's target together. When it exceeds ``threshold``, every
    gradient is multiplied by ``threshold / norm``; otherwise none changes.
    Parameters without a gradient are skipped. On one GPU this takes one
    reduction per gradient, one sum and one scaling kernel per gradient, and
    no synchronisation with the host; gradients spread over several devices
    have their partial norms read back once per device.

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
        per_device = {}
        for param in opt.target.params(False):
            if param.grad is not None:
                per_device.setdefault(param.device, []).append(param.grad)
        if not per_device:
            return
        if len(per_device) == 1:
            ((device, grads),) = per_device.items()
            if device.xp is not numpy:
                with device:
                    self._clip_on_gpu(device.xp, grads)
                return
        sqnorm = 0.0
        for device, grads in per_device.items():
            if device.xp is numpy:
                sqnorm += sum(_squared_norm(g) for g in grads)
            else:
                with device:
                    sqnorm += float(self._gpu_squared_norm(device.xp, grads))
        norm = numpy.sqrt(sqnorm)
        if norm <= self.threshold:
            return
        rate = self.threshold / norm
        for grads in per_device.values():
            for g in grads:
                g *= rate

    @staticmethod
    def _gpu_squared_norm(xp, grads):
        sums = xp.empty(len(grads), accumulation_dtype(*(g.dtype for g in grads)))
        for index, g in enumerate(grads):
            squared_sum(g, sums[index])
        return sums.sum()

    def _clip_on_gpu(self, xp, grads):
        sqnorm = self._gpu_squared_norm(xp, grads)
        kernel = gpu_elementwise(_CLIP_TO_NORM_ELEMENTWISE)
        for g in grads:
            kernel(sqnorm, self.threshold, g)
