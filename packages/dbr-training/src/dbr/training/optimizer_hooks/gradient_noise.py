"""GradientNoise: annealed Gaussian noise added to the gradients."""

import numpy

from dbr.core import backend
from dbr.training.optimizer import grad_or_none
from dbr.training.optimizer_hooks._util import check_real


def exponential_decay_noise(xp, shape, dtype, hook, opt):
    """Draw Gaussian noise whose variance decays as ``eta / (1 + t) ** 0.55``.

    This is the schedule of Neelakantan et al., "Adding Gradient Noise
    Improves Learning for Very Deep Networks" (2015). Samples come from
    ``xp.random`` (NumPy's global generator on the CPU), so
    ``numpy.random.seed`` makes them reproducible.

    Args:
        xp: the array module (numpy or cupy).
        shape (tuple of int): shape of the noise.
        dtype: dtype of the noise.
        hook (GradientNoise): the hook; its ``eta`` is the base variance.
        opt: the update rule (or optimizer) being run; its ``t`` is the
            number of updates done so far.

    Returns:
        an array of ``shape`` and ``dtype`` on ``xp``.
    """
    std = numpy.sqrt(hook.eta / numpy.power(1 + opt.t, 0.55))
    return xp.random.normal(0, std, shape).astype(dtype, copy=False)


class GradientNoise:
    """Optimizer/UpdateRule hook adding noise to each gradient.

    The noise is ``noise_func(xp, shape, dtype, hook, rule)``, by default
    :func:`exponential_decay_noise`: zero-mean Gaussian with variance
    ``eta / (1 + t) ** 0.55`` at the rule's update count ``t``.

    Args:
        eta (float): the base variance of the noise (non-negative).
        noise_func (callable): ``noise_func(xp, shape, dtype, hook, opt)``
            returning the noise array.

    Attributes:
        eta (float): the base variance.
        noise_func (callable): the noise generator.
        timing (str): ``'pre'`` (the default) or ``'post'``.
        call_for_each_param (bool): True: called as ``hook(rule, param)``.
        name (str): ``'GradientNoise'``.
    """

    name = "GradientNoise"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, eta, noise_func=exponential_decay_noise):
        self.eta = check_real("GradientNoise", "eta", eta, minimum=0.0)
        if not callable(noise_func):
            raise TypeError(
                f"GradientNoise: noise_func must be callable, got {noise_func!r} "
                f"({type(noise_func).__name__})"
            )
        self.noise_func = noise_func

    def __call__(self, rule, param):
        """Add ``noise_func(xp, grad.shape, grad.dtype, self, rule)`` to ``param.grad``."""
        g = grad_or_none(param)
        if g is None:
            return
        xp = backend.get_array_module(g)
        if xp is numpy:
            g += self.noise_func(xp, g.shape, g.dtype, self, rule)
            return
        # The noise is drawn by the generator of the gradient's GPU.
        with param.device:
            g += self.noise_func(xp, g.shape, g.dtype, self, rule)
