"""BlackOut: the BlackOut loss with its output embedding and sampler."""

import dbr.functions as F
from dbr.core import Parameter, config, initializers
from dbr.links._checks import check_int_at_least
from dbr.links.loss._sampled_output import SampledOutput
from dbr.links.loss.walker_alias import WalkerAlias


class BlackOut(SampledOutput):
    """BlackOut loss layer (Ji et al., 2016), holding the output word vectors ``W``.

    Each call draws ``sample_size`` negatives per example from the word
    frequencies ``counts`` (normalised, no power, as in Chainer) with a
    :class:`WalkerAlias` sampler and returns
    :func:`dbr.functions.black_out` averaged over the batch.

    Args:
        in_size (int): the dimension of the input vectors.
        counts (sequence of ints or floats): the frequency of each word, of
            length ``V``.
        sample_size (int): the number of negatives per example.

    Attributes:
        W (Parameter): ``(V, in_size)`` of ``config.dtype``, initialised with
            :class:`~dbr.core.initializers.LeCunNormal` (Chainer leaves it NaN).
        sampler (WalkerAlias): draws the negatives.
        sample_size (int): as given.
        sample_data (array or None): when set, the ``(B, sample_size)``
            negatives used instead of drawing (for tests, as in Chainer).

    >>> import numpy as np
    >>> bo = BlackOut(3, [5, 1, 2, 2], 2)
    >>> loss = bo(np.ones((4, 3), np.float32), np.array([0, 1, 2, 3], np.int32))
    >>> loss.shape, loss.dtype
    ((), dtype('float32'))
    """

    sample_data = None

    def __init__(self, in_size, counts, sample_size):
        super().__init__()
        check_int_at_least("BlackOut", "in_size", in_size, 1)
        check_int_at_least("BlackOut", "sample_size", sample_size, 1)
        self.sampler = WalkerAlias(counts)
        self.sample_size = int(sample_size)
        with self.init_scope():
            self.W = Parameter(
                initializers.LeCunNormal(dtype=config.dtype),
                (self.sampler.threshold.shape[0], int(in_size)),
            )

    def forward(self, x, t):
        """The mean BlackOut loss of ``x`` against the true words ``t``.

        Args:
            x (Variable or array): ``(B, in_size)`` inputs of ``W``'s dtype.
            t (array): ``(B,)`` int32 word ids.

        Returns:
            Variable: the 0-d mean loss.
        """
        samples = self.sample_data
        if samples is None:
            samples = self.sampler.sample((x.shape[0], self.sample_size))
        return F.black_out(x, t, self.W, samples)
