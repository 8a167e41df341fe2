"""Linear: the fully-connected layer."""

import dbr.functions as F
from dbr.core import Link, Parameter, initializers
from dbr.links._checks import check_size
from dbr.links.connection import _conv_args


def add_linear_params(link, initialW, nobias, initial_bias, in_size, out_size):
    """Register ``link.W`` and ``link.b`` (None when ``nobias``) of a fully connected layer.

    ``W`` is shaped by ``link._initialize_params(in_size)`` at once when
    ``in_size`` is known (drawn before ``b``, as in Chainer), else at the
    first call; ``initial_bias`` None means zeros.
    """
    with link.init_scope():
        link.W = Parameter(initializers.get_initializer(initialW))
        if in_size is not None:
            link._initialize_params(in_size)
        _conv_args.add_bias(link, nobias, initial_bias, out_size)


class Linear(Link):
    """Fully-connected layer: ``y = x W^T + b`` (see :func:`dbr.functions.linear`).

    Args:
        in_size (int or None): the size of each input sample. None infers
            it at the first call from the input (the product of the axes
            after the batch axes). With ``out_size`` omitted, the only
            argument given is ``out_size`` and ``in_size`` is None:
            ``Linear(10)`` is ``Linear(None, 10)``.
        out_size (int): the size of each output sample.
        nobias (bool): if True, there is no bias (``b`` is None).
        initialW: initializer of ``W`` (an initializer, a scalar or an
            array); None uses :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of ``b``; None fills it with zeros.

    Attributes:
        in_size (int or None), out_size (int): the sizes given (``in_size``
            stays None when it is inferred).
        W (Parameter): the weight, of shape ``(out_size, in_size)``.
        b (Parameter or None): the bias, of shape ``(out_size,)``.

    >>> import numpy
    >>> link = Linear(3, 2)
    >>> link(numpy.zeros((4, 3), numpy.float32)).shape
    (4, 2)
    """

    def __init__(self, in_size, out_size=None, nobias=False, initialW=None, initial_bias=None):
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        check_size("Linear", "in_size", in_size, True)
        check_size("Linear", "out_size", out_size, False)
        self.in_size = in_size
        self.out_size = out_size
        add_linear_params(self, initialW, nobias, initial_bias, in_size, out_size)

    @classmethod
    def from_params(cls, W, b=None, nobias=False):
        """Build a Linear whose parameters are copies of the arrays ``W`` and ``b``.

        Args:
            W (array or Variable): the weight, of shape ``(out_size, in_size)``.
            b (array, Variable or None): the bias, of shape ``(out_size,)``;
                None gives zeros (or no bias with ``nobias``).
            nobias (bool): as in the constructor.
        """
        W = getattr(W, "array", W)
        b = getattr(b, "array", b)
        out_size, in_size = W.shape
        if b is not None and b.size != out_size:
            raise ValueError(
                f"Linear.from_params: b must have {out_size} elements (W's out_size), "
                f"got shape {b.shape}"
            )
        return cls(in_size, out_size, nobias, initialW=W, initial_bias=b)

    def _initialize_params(self, in_size):
        self.W.initialize((self.out_size, in_size))

    def forward(self, x, n_batch_axes=1):
        """Apply the layer to ``x``.

        Args:
            x (Variable or array): input of shape ``(*batch, *sample)`` where
                ``batch`` is the first ``n_batch_axes`` axes and the sample
                axes hold ``in_size`` elements in all.
            n_batch_axes (int): how many leading axes are batch axes.

        Returns:
            Variable: of shape ``(*batch, out_size)`` and the dtype of ``x``.
        """
        if self.W.array is None:
            in_size = 1
            for d in x.shape[n_batch_axes:]:
                in_size *= d
            self._initialize_params(in_size)
        return F.linear(x, self.W, self.b, n_batch_axes=n_batch_axes)
