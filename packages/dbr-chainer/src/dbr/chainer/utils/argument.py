"""``chainer.utils.argument``: keyword-argument parsing, dbr.core.utils' functions."""

from dbr.core.utils import assert_kwargs_empty, check_unexpected_kwargs, parse_kwargs

__all__ = ["assert_kwargs_empty", "check_unexpected_kwargs", "parse_kwargs"]
