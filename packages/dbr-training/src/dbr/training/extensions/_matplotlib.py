"""Whether matplotlib (dbr-training's ``plot`` extra) is installed, warning once when it is not."""

import warnings


def plotting_available(who):
    """Return whether matplotlib imports; if not, warn (once per caller) naming the extra.

    As in Chainer, an extension that plots without matplotlib plots nothing,
    and says so instead of failing the training.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        warnings.warn(
            f"{who}: matplotlib is not installed, so nothing will be plotted; "
            'install it with: pip install "dbr-training[plot]"',
            UserWarning,
            stacklevel=3,
        )
        return False
    return True
