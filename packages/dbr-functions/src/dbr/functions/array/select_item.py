"""select_item: pick one element of each row by an index vector."""

from dbr.core import FunctionNode, type_check
from dbr.core.backend import get_array_module


class SelectItem(FunctionNode):
    """``y[i] = x[i, t[i]]`` for a 2-D ``x`` and an integer vector ``t``."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "t"))
        x_type, t_type = in_types
        type_check.expect(
            t_type.dtype.kind == "i",
            x_type.ndim == 2,
            t_type.ndim == 1,
            x_type.shape[0] == t_type.shape[0],
        )

    def forward(self, inputs):
        self.retain_inputs((1,))
        x, t = inputs
        n_class = x.shape[1]
        if t.size and (int(t.min()) < 0 or int(t.max()) >= n_class):
            raise ValueError(
                f"select_item: expected every t in [0, x.shape[1]) = [0, {n_class}), "
                f"got values from {int(t.min())} to {int(t.max())}"
            )
        self._n_class = n_class
        xp = get_array_module(x)
        return (x[xp.arange(t.size), t],)

    def backward(self, indexes, grad_outputs):
        t = self.get_retained_inputs()[0]
        return SelectItemGrad(self._n_class).apply((t, grad_outputs[0])) + (None,)


class SelectItemGrad(FunctionNode):
    """The gradient of :class:`SelectItem`: ``gx[i, t[i]] = gy[i]``, zeros elsewhere."""

    def __init__(self, n_class):
        self.n_class = n_class

    def forward(self, inputs):
        self.retain_inputs((0,))
        t, gy = inputs
        xp = get_array_module(gy)
        gx = xp.zeros((t.size, self.n_class), gy.dtype)
        gx[xp.arange(t.size), t] = gy
        return (gx,)

    def backward(self, indexes, grad_outputs):
        t = self.get_retained_inputs()[0]
        return None, SelectItem().apply((grad_outputs[0], t))[0]


def select_item(x, t):
    """Select one element from each row of ``x``: ``y[i] = x[i, t[i]]``.

    The gradient of ``x`` is zero except at the selected elements, which get
    the output gradient.

    Args:
        x (Variable or array): a 2-D array of shape ``(B, N)``.
        t (Variable or array): a signed-integer vector of shape ``(B,)`` with
            values in ``[0, N)``; it gets no gradient.

    Returns:
        Variable: of shape ``(B,)`` and ``x``'s dtype.

    Raises:
        ValueError: a value of ``t`` lies outside ``[0, N)``.

    >>> import numpy as np
    >>> x = np.array([[0, 1, 2], [3, 4, 5]], np.float32)
    >>> select_item(x, np.array([2, 0], np.int32)).array
    array([2., 3.], dtype=float32)
    """
    return SelectItem().apply((x, t))[0]
