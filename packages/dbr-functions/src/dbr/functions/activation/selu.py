"""selu: the scaled exponential linear unit."""

import numbers

from dbr.functions.activation.elu import ELU, check_alpha


def selu(x, alpha=1.6732632423543772, scale=1.0507009873554805):
    """Scaled exponential linear unit, ``scale * elu(x, alpha)``.

    .. math::
        y_i = \\lambda \\begin{cases} x_i & (x_i > 0) \\\\
        \\alpha (\\exp(x_i) - 1) & (x_i \\le 0) \\end{cases}

    The default :math:`\\alpha` and :math:`\\lambda` (``scale``) make the
    activations of a suitably initialized network self-normalizing
    (Klambauer et al., 2017).

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.
        alpha (float): the coefficient :math:`\\alpha` of the negative part.
        scale (float): the scale :math:`\\lambda` of the output.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        TypeError: ``alpha`` or ``scale`` is not a real number.

    >>> import numpy as np
    >>> selu(np.array([-1.0, 0.0, 2.0], np.float32)).array.round(4)
    array([-1.1113,  0.    ,  2.1014], dtype=float32)
    """
    alpha = check_alpha(alpha, "selu")
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"selu: expected scale to be a real number, got {scale!r}")
    return ELU(alpha).apply((x,))[0] * float(scale)
