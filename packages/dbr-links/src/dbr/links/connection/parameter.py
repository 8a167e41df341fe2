"""Parameter: a link holding one given array as its parameter ``W``, returned when called."""

import dbr.functions as F
from dbr.core import Link
from dbr.core import Parameter as _Parameter
from dbr.core.backend import get_device_from_array


class Parameter(Link):
    """A link whose one parameter ``W`` is the given array; calling it returns ``W``.

    It lets a free array be trained as part of a model: the array is not
    copied (``link.W.array is array``) and the link lives on the array's device.

    Args:
        array (array): the initial value of ``W`` (NumPy or CuPy), kept as it is.

    Attributes:
        W (dbr.core.Parameter): the parameter.

    >>> import numpy
    >>> link = Parameter(numpy.zeros((2, 3), numpy.float32))
    >>> link().shape
    (2, 3)
    """

    def __init__(self, array):
        super().__init__()
        if not hasattr(array, "shape") or not hasattr(array, "dtype"):
            raise TypeError(
                "Parameter: expected array to be a NumPy or CuPy array, "
                f"got {type(array).__name__}"
            )
        with self.init_scope():
            self.W = _Parameter(array)
        self._device = get_device_from_array(array)

    def forward(self, volatile="off"):
        """Return ``W`` through :func:`dbr.functions.identity`, so the graph records the call.

        Args:
            volatile: ignored; Chainer v1's argument, kept so old calls still work.
        """
        return F.identity(self.W)
