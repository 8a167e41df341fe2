"""``chainer.backends.intel64``: a stand-in answering as Chainer without iDeep (dbr has none).

Chainer code guards its iDeep paths with ``is_ideep_available()`` or
``should_use_ideep(level)``, both False here, so they are skipped.
"""

from dbr.core import config  # Chainer's module re-exports it

__all__ = [
    "check_ideep_available", "config", "ideep", "inputs_all_ready", "is_ideep_available",
    "mdarray", "should_use_ideep",
]  # fmt: skip

ideep = None
"""The iDeep module: None, as in Chainer when ``ideep4py`` is not installed."""


class mdarray:  # noqa: N801 (iDeep's name)
    """Stands for ``ideep4py.mdarray``: no array is an instance of it."""


def is_ideep_available():
    """Return False: dbr has no iDeep backend."""
    return False


def check_ideep_available():
    """Raise RuntimeError: iDeep is not available in dbr."""
    raise RuntimeError("check_ideep_available: iDeep is not available (dbr has no iDeep backend)")


def should_use_ideep(level):
    """Return False: without iDeep no level (``'==always'``, ``'>=auto'``) uses it."""
    return False


def inputs_all_ready(inputs, supported_ndim=(2, 4)):
    """Return False: no input is ready for iDeep when there is no iDeep."""
    return False
