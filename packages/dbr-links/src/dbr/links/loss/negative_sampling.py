"""NegativeSampling: the word2vec negative-sampling loss with its output embedding."""

import numpy

from dbr.core import Parameter, config, initializers
from dbr.functions.loss import negative_sampling as _function_module
from dbr.links._checks import check_int_at_least
from dbr.links.loss._sampled_output import SampledOutput
from dbr.links.loss.walker_alias import WalkerAlias


class NegativeSampling(SampledOutput):
    """Negative sampling loss layer, holding the output word vectors ``W``.

    Negatives are drawn from the unigram distribution raised to ``power``
    (``counts ** power``, normalised) by a :class:`WalkerAlias` sampler; see
    :func:`dbr.functions.negative_sampling` for the loss.

    Args:
        in_size (int): the dimension of the input vectors.
        counts (sequence of ints or floats): the frequency of each word, of
            length ``V`` (the vocabulary size).
        sample_size (int): the number of negatives drawn per example.
        power (float): the exponent applied to ``counts`` (0.75 by default).
        dtype: the dtype of ``W`` (``config.dtype`` when None).

    Attributes:
        W (Parameter): ``(V, in_size)``, initialised with zeros.
        sampler (WalkerAlias): draws the negatives.
        sample_size (int): as given.

    >>> import numpy as np
    >>> ns = NegativeSampling(3, [5, 1, 2, 2], 2)
    >>> x = np.ones((4, 3), np.float32)
    >>> t = np.array([0, 1, 2, 3], np.int32)
    >>> round(float(ns(x, t).array), 4)  # W is zero: 4 rows * 3 terms * log(2)
    8.3178
    """

    def __init__(self, in_size, counts, sample_size, power=0.75, dtype=None):
        super().__init__()
        check_int_at_least("NegativeSampling", "in_size", in_size, 1)
        check_int_at_least("NegativeSampling", "sample_size", sample_size, 0)
        dtype = numpy.dtype(config.dtype if dtype is None else dtype)
        counts = numpy.asarray(counts, numpy.float64)
        self.sampler = WalkerAlias(counts**power)
        self.sample_size = int(sample_size)
        with self.init_scope():
            self.W = Parameter(initializers.Zero(dtype), (len(counts), int(in_size)))

    def forward(self, x, t, reduce="sum", *, return_samples=False):
        """The negative sampling loss of ``x`` against the true words ``t``.

        Args:
            x (Variable or array): ``(B, in_size)`` inputs of ``W``'s dtype.
            t (array): ``(B,)`` int32 word ids; rows with -1 are ignored.
            reduce (str): ``'sum'`` (a 0-d loss) or ``'no'`` (one per row).
            return_samples (bool): also return the ``(B, sample_size + 1)``
                int32 samples (first column ``t``, then the negatives).

        Returns:
            Variable or tuple: the loss, or ``(loss, samples)``.
        """
        # Looked up on its module at each call, as Chainer does, so that
        # patching the module's function (as Chainer's tests do) reaches it.
        return _function_module.negative_sampling(
            x,
            t,
            self.W,
            self.sampler.sample,
            self.sample_size,
            reduce=reduce,
            return_samples=return_samples,
        )
