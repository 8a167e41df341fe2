"""``chainer.utils.experimental``: the ``experimental`` warning helper."""

import warnings

__all__ = ["experimental"]


def experimental(api_name):
    """Warn (FutureWarning) that ``api_name`` is experimental, as Chainer's API marks do.

    dbr marks none of its own objects experimental; this is for code that
    calls Chainer's helper itself. ``dbr.chainer.disable_experimental_feature_warning
    = True`` silences it.

    Args:
        api_name (str): the name of the experimental function or class.
    """
    if not isinstance(api_name, str):
        raise TypeError(
            f"experimental: expected api_name to be a str, got {type(api_name).__name__}"
        )
    import dbr.chainer  # the package imports this module: import it when called

    if not dbr.chainer.disable_experimental_feature_warning:
        warnings.warn(
            f"{api_name} is experimental. The interface can change in the future.",
            FutureWarning,
            stacklevel=3,
        )
