"""BatchRenormalization: batch normalization corrected towards the running statistics."""

import numpy

import dbr.functions as F
from dbr.core import config
from dbr.links.normalization.batch_normalization import BatchNormalization


class BatchRenormalization(BatchNormalization):
    """Batch renormalization layer (Ioffe, 2017).

    In training mode it computes :func:`dbr.functions.batch_renormalization`:
    batch normalization whose output is corrected by ``r`` (the ratio of the
    batch standard deviation to the running one, clipped to ``[1/rmax,
    rmax]``) and ``d`` (the difference of the means over the running
    standard deviation, clipped to ``[-dmax, dmax]``), so that training and
    inference outputs agree better with small or non-i.i.d. batches. The
    running averages ``avg_mean`` and ``avg_var`` (unbiased variance) are
    updated with ``decay``, or cumulatively with ``finetune=True``, as in
    :class:`BatchNormalization`, unless ``freeze_running_statistics``. In
    test mode it is :func:`dbr.functions.fixed_batch_normalization` with the
    running averages. The channels are the axes after the batch axis.

    Args:
        size (int or tuple of ints): the shape of the channel axes.
        rmax (float): bound of ``r`` (default 1: no variance correction).
        dmax (float): bound of ``|d|`` (default 0: no mean correction).
        decay (float): decay rate of the moving averages (default 0.9).
        eps (float): added to the variances (default 2e-5).
        dtype: dtype of the parameters and statistics (default float32).
        use_gamma (bool): learn the scale ``gamma`` (else it is 1).
        use_beta (bool): learn the shift ``beta`` (else it is 0).
        initial_gamma: initializer of ``gamma``; None fills it with ones.
        initial_beta: initializer of ``beta``; None fills it with zeros.
        freeze_running_statistics (bool): keep ``avg_mean`` and ``avg_var``
            unchanged in training mode.

    Attributes:
        rmax, dmax, freeze_running_statistics: as given; the other
            attributes and persistents (``avg_mean``, ``avg_var``, ``N``) are
            those of :class:`BatchNormalization`.

    >>> import numpy
    >>> brn = BatchRenormalization(3, rmax=3.0, dmax=5.0)
    >>> brn(numpy.ones((4, 3), numpy.float32)).shape
    (4, 3)
    """

    def __init__(
        self,
        size,
        rmax=1,
        dmax=0,
        decay=0.9,
        eps=2e-5,
        dtype=numpy.float32,
        use_gamma=True,
        use_beta=True,
        initial_gamma=None,
        initial_beta=None,
        freeze_running_statistics=False,
    ):
        if size is None:
            raise ValueError("BatchRenormalization: size must be given, got None")
        super().__init__(size, decay, eps, dtype, use_gamma, use_beta, initial_gamma, initial_beta)
        self.rmax = rmax
        self.dmax = dmax
        self.freeze_running_statistics = freeze_running_statistics

    def forward(self, x, finetune=False):
        """Renormalize ``x`` (training) or normalize it by the running statistics (test).

        Args:
            x (Variable or array): input of shape ``(batch, *size, ...)``,
                floating.
            finetune (bool): in training mode, average the statistics
                cumulatively (see :class:`BatchNormalization`).

        Returns:
            Variable: of ``x``'s shape and dtype.
        """
        gamma, beta = self._scale_and_shift()
        if not config.train:
            return F.fixed_batch_normalization(
                x, gamma, beta, self.avg_mean, self.avg_var, self.eps
            )
        recomputing = config.in_recomputing
        if finetune and not recomputing:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        else:
            decay = self.decay
        avg_mean, avg_var = self.avg_mean, self.avg_var
        if recomputing:
            # The renormalization factors depend on the running statistics: F.forget's
            # recomputation must see them as the first forward did, before its update.
            avg_mean, avg_var = getattr(self, "_before_update", None) or (avg_mean, avg_var)
        elif config._will_recompute:
            self._before_update = (avg_mean.copy(), avg_var.copy())
        return F.batch_renormalization(
            x,
            gamma,
            beta,
            self.rmax,
            self.dmax,
            self.eps,
            avg_mean,
            avg_var,
            decay,
            update_statistics=not (self.freeze_running_statistics or recomputing),
        )
