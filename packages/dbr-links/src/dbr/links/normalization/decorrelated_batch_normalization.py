"""DecorrelatedBatchNormalization: whitening of channel groups by batch statistics."""

import warnings

import numpy

import dbr.functions as F
from dbr.core import Link, backend, config
from dbr.core.serializers import DeserializationError, Deserializer
from dbr.links._checks import check_size
from dbr.links.normalization.batch_normalization import _parse_forward_kwargs


class DecorrelatedBatchNormalization(Link):
    """Decorrelated batch normalization layer (Huang et al., 2018).

    The ``size`` channels of ``x`` (shape ``(N, size, ...)``) are split into
    ``groups`` groups of ``C = size // groups`` consecutive channels, each
    centred and ZCA-whitened. In training mode it is
    :func:`dbr.functions.decorrelated_batch_normalization` with the batch
    statistics, and the moving averages ``avg_mean`` and ``avg_projection``
    are updated with ``decay`` (or, with ``finetune=True``, cumulatively:
    ``decay = 1 - 1 / N``). In test mode it is
    :func:`dbr.functions.fixed_decorrelated_batch_normalization` with the
    averages. The link has no parameters.

    Args:
        size (int): the number of channels; a multiple of ``groups``.
        groups (int): the number of channel groups (default 16).
        decay (float): decay rate of the moving averages (default 0.9).
        eps (float): added to the diagonal of the covariances (default 2e-5).
        dtype: dtype of the statistics (default float32).

    Attributes:
        avg_mean (array): population means, shape ``(groups, C)`` (persistent).
        avg_projection (array): population whitening matrices, shape
            ``(groups, C, C)``, initially the identity (persistent).
        N (int): the number of fine-tuning calls since
            :meth:`start_finetuning` (persistent).
        groups, decay, eps: as given.

    Loading also accepts the statistics as older Chainer versions stored
    them, for one group (``avg_mean`` of shape ``(C,)``, ``avg_projection``
    of ``(C, C)``; Chainer issue 7706): they are copied to every group, with
    a warning when there are several, since those versions computed them by
    a different algorithm than the paper's.

    >>> import numpy
    >>> dbn = DecorrelatedBatchNormalization(4, groups=2)
    >>> dbn(numpy.random.randn(8, 4).astype(numpy.float32)).shape
    (8, 4)
    """

    def __init__(self, size, groups=16, decay=0.9, eps=2e-5, dtype=numpy.float32):
        super().__init__()
        check_size("DecorrelatedBatchNormalization", "size", size)
        check_size("DecorrelatedBatchNormalization", "groups", groups)
        if size % groups:
            raise ValueError(
                f"DecorrelatedBatchNormalization: size must be a multiple of groups, "
                f"got size={size} and groups={groups}"
            )
        channels = size // groups
        self.groups = groups
        self.decay = decay
        self.eps = eps
        self.add_persistent("avg_mean", numpy.zeros((groups, channels), dtype=dtype))
        projection = numpy.zeros((groups, channels, channels), dtype=dtype)
        projection[:, numpy.arange(channels), numpy.arange(channels)] = 1
        self.add_persistent("avg_projection", projection)
        self.add_persistent("N", 0)

    def serialize(self, serializer):
        """Save or load ``N``, ``avg_mean`` and ``avg_projection`` (see the class docstring)."""
        if not isinstance(serializer, Deserializer):
            super().serialize(serializer)
            return
        d = self.__dict__
        for name in sorted(self._persistent):
            if name in _STATISTICS:
                # Requested without a target, so that one group's statistics also load.
                stored = serializer(name, None)
                if stored is not None:
                    backend.copyto(d[name], self._one_group_to_all(name, stored))
            else:
                d[name] = serializer(name, d[name])

    def _one_group_to_all(self, name, stored):
        target = self.__dict__[name]
        if tuple(stored.shape) == target.shape:
            return stored
        if tuple(stored.shape) != target.shape[1:]:
            raise DeserializationError(
                f"DecorrelatedBatchNormalization: cannot load {name!r}: expected shape "
                f"{target.shape} (or {target.shape[1:]} for one group, as older Chainer "
                f"stored it), got {tuple(stored.shape)}",
                mismatched=[(name, f"the file holds shape {tuple(stored.shape)}")],
            )
        if self.groups != 1:
            warnings.warn(
                f"DecorrelatedBatchNormalization: {name!r} holds one group's statistics, "
                "as older Chainer computed them (by a different algorithm than the "
                f"paper's); they are copied to each of the {self.groups} groups",
                UserWarning,
                stacklevel=3,
            )
        return numpy.broadcast_to(stored, target.shape)

    def forward(self, x, **kwargs):
        """forward(x, finetune=False)

        Whiten ``x``.

        Args:
            x (Variable or array): input of shape ``(N, size, ...)``, floating.
            finetune (bool): in training mode, average the statistics
                cumulatively.

        Returns:
            Variable: of ``x``'s shape and dtype.
        """
        finetune = _parse_forward_kwargs(type(self).__name__, kwargs) if kwargs else False
        if not config.train:
            return F.fixed_decorrelated_batch_normalization(
                x, self.avg_mean, self.avg_projection, groups=self.groups
            )
        if config.in_recomputing:
            return F.decorrelated_batch_normalization(x, groups=self.groups, eps=self.eps)
        if finetune:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        else:
            decay = self.decay
        return F.decorrelated_batch_normalization(
            x,
            groups=self.groups,
            eps=self.eps,
            running_mean=self.avg_mean,
            running_projection=self.avg_projection,
            decay=decay,
        )

    def start_finetuning(self):
        """Reset ``N``, so that the next fine-tuning calls start new cumulative averages."""
        self.N = 0


_STATISTICS = ("avg_mean", "avg_projection")
