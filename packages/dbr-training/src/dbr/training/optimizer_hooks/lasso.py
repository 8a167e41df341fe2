"""Lasso: L1 regularization applied to the gradients."""

from dbr.core import backend
from dbr.training.optimizer_hooks._util import check_real


class Lasso:
    """Optimizer/UpdateRule hook adding ``rate * sign(param)`` to each parameter's gradient.

    This is the (sub)gradient of the L1 penalty ``rate * ||param||_1``. The
    gradient is updated in place; a parameter without array or gradient is
    left alone.

    Args:
        rate (float): coefficient of the L1 penalty.

    Attributes:
        rate (float): coefficient of the L1 penalty.
        timing (str): ``'pre'`` (the default) or ``'post'``.
        call_for_each_param (bool): True: called as ``hook(rule, param)``.
        name (str): ``'Lasso'``.
    """

    name = "Lasso"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, rate):
        self.rate = check_real("Lasso", "rate", rate)

    def __call__(self, rule, param):
        """Add ``rate * sign(param.array)`` to ``param.grad`` in place."""
        p, g = param.array, param.grad
        if p is None or g is None:
            return
        xp = backend.get_array_module(p)
        g += self.rate * xp.sign(p)
