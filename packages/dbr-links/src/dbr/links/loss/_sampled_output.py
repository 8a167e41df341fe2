"""The base of the losses that hold output word vectors and draw negatives from a sampler."""

from dbr.core import Link


class SampledOutput(Link):
    """A link holding output word vectors ``W`` ``(V, in_size)`` and a ``sampler`` of negatives.

    The subclass sets ``W`` (a Parameter), ``sampler`` (a
    :class:`~dbr.links.loss.walker_alias.WalkerAlias`) and ``sample_size``.
    Moving the link moves the sampler's tables with ``W``.
    """

    def to_device(self, device):
        """Move ``W`` and the sampler's tables to ``device``; returns this link."""
        super().to_device(device)
        self.sampler.to_device(self.device)
        return self

    @property
    def printable_specs(self):
        """``in_size``, ``vocab_size`` and ``sample_size``, shown by ``str(link)``."""
        vocab_size, in_size = self.W.shape
        yield "in_size", in_size
        yield "vocab_size", vocab_size
        yield "sample_size", self.sample_size
