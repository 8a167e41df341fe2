"""What the special functions share: lazy SciPy/CuPy lookup and the elementwise base node.

SciPy is an optional extra (``dbr-functions[special]``), so it is imported only
when a special function runs on the CPU; on the GPU ``cupyx.scipy.special``
serves. Both are looked up at every call (a dictionary lookup once imported),
so that removing SciPy from ``sys.modules`` is seen at once.
"""

import numpy

from dbr.core import FunctionNode, backend, type_check
from dbr.core.utils import force_array

_ndarray = numpy.ndarray
_INSTALL_HINT = 'pip install "dbr-functions[special]"'


def array_module(x):
    """The array module of ``x`` (fast path for NumPy arrays)."""
    return numpy if type(x) is _ndarray else backend.get_array_module(x)


def special_function(xp, name, who):
    """Return ``scipy.special.<name>`` for NumPy arrays, ``cupyx.scipy.special.<name>`` otherwise.

    Args:
        xp: the array module of the inputs.
        name (str): the function's name in ``scipy.special``.
        who (str): the dbr function asking, named in the ImportError.

    Raises:
        ImportError: on the CPU without SciPy, saying how to install it.
        RuntimeError: on CuPy arrays when no GPU can be used (from ``dbr.gpu.require``).
    """
    if xp is numpy:
        try:
            from scipy import special
        except ImportError as e:
            raise ImportError(
                f"{who} needs SciPy on the CPU, which is not installed: {_INSTALL_HINT}"
            ) from e
    else:
        import dbr.gpu

        dbr.gpu.require(who)
        from cupyx.scipy import special
    return getattr(special, name)


class UnarySpecialFunction(FunctionNode):
    """Base of the elementwise special functions of one floating input ``x``.

    A subclass sets ``name`` (the dbr function) and ``special_name`` (its name
    in ``scipy.special``); :meth:`evaluate` computes it in ``x``'s dtype
    (float16 goes through SciPy's float32 or float64 loop and is rounded back).
    """

    name = None
    special_name = None

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        type_check.expect(in_types.size() == 1, in_types[0].dtype.kind == "f")

    def evaluate(self, x):
        """``special_name(x)`` as an array of ``x``'s dtype."""
        f = special_function(array_module(x), self.special_name, self.name)
        return force_array(f(x), x.dtype)
