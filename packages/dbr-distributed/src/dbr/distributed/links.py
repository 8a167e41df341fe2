"""Links whose computation spans the ranks."""

import dbr.functions as F
from dbr.core import Chain, ChainList, config
from dbr.distributed.functions import allreduce
from dbr.links import BatchNormalization

__all__ = ["MultiNodeBatchNormalization", "create_mnbn_model"]


class MultiNodeBatchNormalization(BatchNormalization):
    """Batch normalization over the batch of every rank together (ChainerMN's MNBN).

    In training mode, the mean and variance are those of the global batch
    (the union of every rank's batch; batch sizes may differ), computed
    with two all-reduces forward and their mirrors backward, so values and
    gradients equal :class:`~dbr.links.BatchNormalization` on the global
    batch. The running averages use the global statistics (the variance
    with Bessel's correction over the global count). Evaluation uses the
    running averages, as BatchNormalization does.

    Args:
        size (int or tuple): the channel shape.
        comm: a communicator.
        decay, eps, dtype, use_gamma, use_beta, initial_gamma, initial_beta:
            as BatchNormalization's.
        communication_backend (str): accepted for ChainerMN compatibility; the
            statistics always travel through ``comm``.
    """

    def __init__(
        self,
        size,
        comm,
        decay=0.9,
        eps=2e-5,
        dtype=None,
        use_gamma=True,
        use_beta=True,
        initial_gamma=None,
        initial_beta=None,
        communication_backend="auto",
    ):
        super().__init__(
            size,
            decay=decay,
            eps=eps,
            dtype=dtype,
            use_gamma=use_gamma,
            use_beta=use_beta,
            initial_gamma=initial_gamma,
            initial_beta=initial_beta,
        )
        self.comm = comm
        self.communication_backend = communication_backend

    def forward(self, x, finetune=False):
        """Normalize ``x`` (batch axis 0, channels next, then any spatial axes) globally."""
        if not config.train:
            return super().forward(x)
        gamma, beta = self._scale_and_shift()
        channels = gamma.ndim
        axes = (0, *range(1 + channels, x.ndim))
        shape = [1] + list(gamma.shape) + [1] * (x.ndim - 1 - channels)
        count = x.size // gamma.size
        total = int(self.comm.allreduce_obj(count))
        mean = allreduce(self.comm, F.sum(x, axis=axes)) / total
        centered = x - F.broadcast_to(F.reshape(mean, shape), x.shape)
        var = allreduce(self.comm, F.sum(centered * centered, axis=axes)) / total
        inv_std = (var + self.eps) ** -0.5
        y = centered * F.broadcast_to(F.reshape(gamma * inv_std, shape), x.shape)
        y = y + F.broadcast_to(F.reshape(beta, shape), x.shape)
        if finetune:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        else:
            decay = self.decay
        adjust = total / max(total - 1, 1)
        self.avg_mean *= decay
        self.avg_mean += ((1 - decay) * mean.array).astype(self.avg_mean.dtype)
        self.avg_var *= decay
        self.avg_var += ((1 - decay) * adjust * var.array).astype(self.avg_var.dtype)
        return y


def _to_mnbn(link, comm, communication_backend):
    mnbn = MultiNodeBatchNormalization(
        link.avg_mean.shape,
        comm,
        decay=link.decay,
        eps=link.eps,
        dtype=link.avg_mean.dtype,
        use_gamma=link.gamma is not None,
        use_beta=link.beta is not None,
        communication_backend=communication_backend,
    )
    mnbn.copyparams(link)
    mnbn.avg_mean[...] = link.avg_mean
    mnbn.avg_var[...] = link.avg_var
    mnbn.N = link.N
    return mnbn


def _is_plain_bn(link):
    return isinstance(link, BatchNormalization) and not isinstance(
        link, MultiNodeBatchNormalization
    )


def _replace_in_place(link, comm, communication_backend):
    if isinstance(link, Chain):
        for name in sorted(link._children):
            child = getattr(link, name)
            if _is_plain_bn(child):
                delattr(link, name)
                with link.init_scope():
                    setattr(link, name, _to_mnbn(child, comm, communication_backend))
            else:
                _replace_in_place(child, comm, communication_backend)
    elif isinstance(link, ChainList):
        for i, child in enumerate(link._children):
            if _is_plain_bn(child):
                link._children[i] = _to_mnbn(child, comm, communication_backend)
            else:
                _replace_in_place(child, comm, communication_backend)
        link._rename_children()


def create_mnbn_model(link, comm, communication_backend="auto"):
    """A deep copy of ``link`` with every BatchNormalization replaced by a multi-node one.

    Each replacement keeps the original's parameters, running averages,
    ``decay`` and ``eps``.
    """
    if _is_plain_bn(link):
        return _to_mnbn(link, comm, communication_backend)
    copied = link.copy(mode="copy")
    _replace_in_place(copied, comm, communication_backend)
    return copied
