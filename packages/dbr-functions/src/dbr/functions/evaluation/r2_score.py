"""r2_score: the coefficient of determination of a regression."""

from dbr.core import FunctionNode, backend, type_check
from dbr.core.utils import accumulation_dtype, force_array

_MULTIOUTPUTS = ("uniform_average", "raw_values")


class R2Score(FunctionNode):
    """R^2 of each output column, or their mean (not differentiable)."""

    def __init__(self, sample_weight=None, multioutput="uniform_average"):
        if sample_weight is not None:
            raise NotImplementedError(
                "r2_score: sample_weight is accepted for compatibility with "
                f"scikit-learn but only None is supported, got {type(sample_weight).__name__}"
            )
        if multioutput not in _MULTIOUTPUTS:
            raise ValueError(
                f"r2_score: expected multioutput to be one of {_MULTIOUTPUTS}, got {multioutput!r}"
            )
        self.multioutput = multioutput

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("pred", "true"))
        pred_type, true_type = in_types
        type_check.expect(
            pred_type.dtype.kind == "f",
            true_type.dtype.kind == "f",
            pred_type.ndim >= 1,
            pred_type.shape == true_type.shape,
        )

    def forward(self, inputs):
        pred, true = inputs
        xp = backend.get_array_module(pred)
        dtype = accumulation_dtype(pred.dtype, true.dtype)
        pred = pred.astype(dtype, copy=False)
        true = true.astype(dtype, copy=False)
        n = max(true.shape[0], 1)
        residual = pred - true
        ss_res = (residual * residual).sum(axis=0)
        centered = true - true.sum(axis=0) / dtype.type(n)
        ss_tot = (centered * centered).sum(axis=0)
        constant = ss_tot == 0
        # R^2 is undefined for a constant target; like Chainer, report 0 for it.
        r2 = xp.where(constant, 0, 1 - ss_res / xp.where(constant, 1, ss_tot))
        if self.multioutput == "uniform_average":
            r2 = r2.mean()
        return (force_array(r2, inputs[0].dtype),)

    def backward(self, indexes, grad_outputs):
        return (None,) * len(indexes)


def r2_score(pred, true, sample_weight=None, multioutput="uniform_average"):
    """R^2, the coefficient of determination, of a regression.

    For each output column ``j`` (the reduction runs over axis 0),

    .. math::
        R^2_j = 1 - \\frac{\\sum_i (\\mathrm{pred}_{ij} - \\mathrm{true}_{ij})^2}
                          {\\sum_i (\\mathrm{true}_{ij} - \\overline{\\mathrm{true}}_j)^2},

    and 0 where ``true[:, j]`` is constant.

    Args:
        pred (Variable or array): predicted values of shape ``(N, ...)``
            (float16, float32 or float64).
        true (Variable or array): true values of ``pred``'s shape (floating).
        sample_weight: for compatibility with scikit-learn; only None is
            supported (anything else raises NotImplementedError).
        multioutput (str): ``'uniform_average'`` returns the mean R^2 over the
            outputs; ``'raw_values'`` returns one R^2 per output.

    Returns:
        Variable: a 0-d array (``'uniform_average'``) or an array of shape
        ``pred.shape[1:]`` (``'raw_values'``), of ``pred``'s dtype (computed in
        at least float32). Not differentiable: backprop gives no gradient.

    >>> import numpy as np
    >>> true = np.array([3.0, -0.5, 2.0, 7.0], np.float32)
    >>> pred = np.array([2.5, 0.0, 2.0, 8.0], np.float32)
    >>> r2_score(pred, true).array
    array(0.94860816, dtype=float32)
    """
    return R2Score(sample_weight, multioutput).apply((pred, true))[0]
