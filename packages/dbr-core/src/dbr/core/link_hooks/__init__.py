"""Concrete link hooks: :class:`TimerHook` (profiling), :class:`SpectralNormalization`
and :class:`WeightStandardization` (reparametrizations of a link's weight).

Each derives from :class:`dbr.core.LinkHook`. TimerHook is used as a context
manager or registered on a link; the two weight hooks are registered on one
link with :meth:`dbr.core.Link.add_hook`.
"""

from dbr.core.link_hooks.spectral_normalization import SpectralNormalization
from dbr.core.link_hooks.timer import TimerHook
from dbr.core.link_hooks.weight_standardization import WeightStandardization

__all__ = ["SpectralNormalization", "TimerHook", "WeightStandardization"]
