"""layer_normalization: normalization of each row of a batch of vectors.

Layer normalization of ``(N, D)`` vectors is group normalization with one
group: each row is normalized by its own mean and variance, then scaled by
``gamma`` and shifted by ``beta`` (both of shape ``(D,)``).
"""

from dbr.core import type_check
from dbr.functions.normalization.batch_normalization import check_real
from dbr.functions.normalization.group_normalization import GroupNormalization


class LayerNormalization(GroupNormalization):
    """Normalize each row of ``x`` (N, D), then apply ``gamma`` and ``beta`` of shape (D,).

    Args:
        eps (float): added to the variances.
    """

    _who = "layer_normalization"

    def __init__(self, eps=1e-5):
        super().__init__(1, eps)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "gamma", "beta"))
        x_type, gamma_type, beta_type = in_types
        type_check.expect(
            x_type.dtype.kind == "f",
            x_type.ndim == 2,
            gamma_type.ndim == 1,
            gamma_type.dtype == x_type.dtype,
            beta_type.dtype == x_type.dtype,
            gamma_type.shape == beta_type.shape,
            x_type.shape[1] == gamma_type.shape[0],
            x_type.shape[1] > 0,
        )


def layer_normalization(x, gamma, beta, eps=1e-5):
    """Layer normalization: normalizes each row of ``x`` by its own statistics.

    For ``x`` of shape ``(N, D)``, with the mean :math:`\\mu_n` and biased
    variance :math:`\\sigma_n^2` of row ``n``,

    .. math::

        y_{nd} = \\gamma_d \\frac{x_{nd} - \\mu_n}{\\sqrt{\\sigma_n^2 + \\epsilon}}
        + \\beta_d.

    float16 is computed in float32. Differentiable any number of times.

    Args:
        x (Variable or array): batch of vectors, shape ``(N, D)`` with
            ``D > 0``, floating.
        gamma (Variable or array): scale of shape ``(D,)``, ``x``'s dtype.
        beta (Variable or array): shift of shape ``(D,)``, ``x``'s dtype.
        eps (float): added to the variances.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> x = np.array([[1.0, 3.0], [10.0, 30.0]], np.float32)
    >>> y = layer_normalization(x, np.ones(2, np.float32), np.zeros(2, np.float32))
    >>> y.array.round(3)
    array([[-1.,  1.],
           [-1.,  1.]], dtype=float32)
    """
    check_real(eps, "eps", "layer_normalization", 0)
    return LayerNormalization(eps).apply((x, gamma, beta))[0]
