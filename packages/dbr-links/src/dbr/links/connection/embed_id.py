"""EmbedID: a learnt lookup table from integer IDs to vectors."""

import dbr.functions as F
from dbr.core import Link, Parameter, initializers
from dbr.links._checks import check_size


class EmbedID(Link):
    """Embedding layer: maps each integer ID to a row of ``W``.

    See :func:`dbr.functions.embed_id`.

    Args:
        in_size (int): the number of IDs (rows of ``W``); IDs lie in
            ``[0, in_size)``.
        out_size (int): the size of each embedding vector.
        initialW: initializer of ``W``; None uses
            :class:`~dbr.core.initializers.Normal` with scale 1.0.
        ignore_label (int or None): an ID whose output is a zero vector (and
            which gets no gradient); None ignores no ID.

    Attributes:
        ignore_label (int or None): as given.
        W (Parameter): the table, of shape ``(in_size, out_size)``.

    >>> import numpy
    >>> link = EmbedID(5, 3)
    >>> link(numpy.array([[0, 4]], numpy.int32)).shape
    (1, 2, 3)
    """

    ignore_label = None

    def __init__(self, in_size, out_size, initialW=None, ignore_label=None):
        super().__init__()
        check_size("EmbedID", "in_size", in_size, False)
        check_size("EmbedID", "out_size", out_size, False)
        self.ignore_label = ignore_label
        if initialW is None:
            initialW = initializers.Normal(1.0)
        with self.init_scope():
            self.W = Parameter(initializers.get_initializer(initialW), (in_size, out_size))

    @classmethod
    def from_params(cls, W, ignore_label=None):
        """Build an EmbedID whose table ``W`` is a copy of ``W``, of shape ``(in_size, out_size)``.

        Args:
            W (array or Variable): the table.
            ignore_label (int or None): as in the constructor.
        """
        W = getattr(W, "array", W)
        in_size, out_size = W.shape
        return cls(in_size, out_size, initialW=W, ignore_label=ignore_label)

    def forward(self, x):
        """Look up the IDs ``x`` (a signed integer array of any shape).

        Returns:
            Variable: of shape ``x.shape + (out_size,)`` and ``W``'s dtype.
        """
        return F.embed_id(x, self.W, ignore_label=self.ignore_label)
