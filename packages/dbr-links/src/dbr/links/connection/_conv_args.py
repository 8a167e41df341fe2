"""Argument handling shared by the convolution links (private).

Chainer's short form, the checks of the constructor arguments and the
creation of ``W`` (left uninitialized until the input channels are known)
and ``b``, so that every convolution link treats them alike.
"""

from dbr.core import Parameter, initializers
from dbr.links._checks import is_int


def short_form(in_channels, out_channels, ksize):
    """Undo Chainer's short form: ``(out_channels, ksize)`` given where ksize is None.

    Returns:
        tuple: ``(in_channels, out_channels, ksize)``, with ``in_channels``
        None when only ``out_channels`` and ``ksize`` were given.
    """
    if ksize is None:
        return None, in_channels, out_channels
    return in_channels, out_channels, ksize


def pair(value):
    """``value`` as Chainer's links keep a 2-D option: a sequence as given, else ``(v, v)``.

    An integer ``v`` (also a NumPy integer, which has ``__getitem__`` too) gives ``(v, v)``.
    """
    if not is_int(value) and hasattr(value, "__getitem__"):
        return value
    return value, value


def ntuple(value, ndim):
    """``value`` as a tuple of ``ndim`` entries (an int ``v`` gives ``(v,) * ndim``)."""
    if not is_int(value) and hasattr(value, "__getitem__"):
        return tuple(value)
    return (value,) * ndim


def check_channels(who, name, value, allow_none=False):
    """Raise ValueError unless ``value`` is a positive int (or None when ``allow_none``)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not hasattr(value, "__index__") or value <= 0:
        expected = "a positive int or None" if allow_none else "a positive int"
        raise ValueError(f"{who}: {name} must be {expected}, got {value!r}")


def check_ints(who, name, value, ndim, minimum):
    """Raise unless ``value`` is an int or a sequence of ``ndim`` ints, each ``>= minimum``.

    Raises:
        TypeError: ``value`` is neither an int nor a sequence of ints.
        ValueError: the sequence has the wrong length or an entry is below ``minimum``.
    """
    if isinstance(value, (tuple, list)):
        if len(value) != ndim:
            raise ValueError(
                f"{who}: {name} must be an int or a sequence of {ndim} ints, "
                f"got a sequence of length {len(value)}: {value!r}"
            )
        values = value
    else:
        values = (value,)
    for v in values:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{who}: {name} must be an int or a sequence of ints, got {value!r}")
        if v < minimum:
            raise ValueError(f"{who}: {name} must be >= {minimum}, got {value!r}")


def parse_conv_args(who, ndim, in_channels, out_channels, ksize, stride, pad, dilate=1, groups=1):
    """Undo the short form (:func:`short_form`), then :func:`check_conv_args`.

    Returns:
        tuple: ``(in_channels, out_channels, ksize)`` as :func:`short_form`.
    """
    in_channels, out_channels, ksize = short_form(in_channels, out_channels, ksize)
    check_conv_args(who, ndim, in_channels, out_channels, ksize, stride, pad, dilate, groups)
    return in_channels, out_channels, ksize


def check_conv_args(who, ndim, in_channels, out_channels, ksize, stride, pad, dilate=1, groups=1):
    """Check a convolution link's constructor arguments, naming ``who`` in the errors.

    ``out_channels`` must be divisible by ``groups`` and so must
    ``in_channels`` when given (it is checked again once inferred).
    """
    check_channels(who, "in_channels", in_channels, allow_none=True)
    check_channels(who, "out_channels", out_channels)
    check_ints(who, "ksize", ksize, ndim, 1)
    check_ints(who, "stride", stride, ndim, 1)
    check_ints(who, "pad", pad, ndim, 0)
    check_ints(who, "dilate", dilate, ndim, 1)
    check_channels(who, "groups", groups)
    if out_channels % groups:
        raise ValueError(
            f"{who}: out_channels must be divisible by groups, "
            f"got out_channels={out_channels}, groups={groups}"
        )
    if in_channels is not None:
        channels_per_group(who, in_channels, groups)


def channels_per_group(who, in_channels, groups):
    """``in_channels // groups``; ValueError (naming ``who``) when it does not divide."""
    if in_channels % groups:
        raise ValueError(
            f"{who}: in_channels must be divisible by groups, "
            f"got in_channels={in_channels}, groups={groups}"
        )
    return in_channels // groups


def add_weight_and_bias(link, initialW, nobias, initial_bias, bias_size, in_channels=None):
    """Register ``link.W`` (uninitialized) and ``link.b`` (None when ``nobias``).

    ``initialW`` None means LeCunNormal and ``initial_bias`` None means
    zeros, as in Chainer. ``bias_size`` None leaves ``b`` uninitialized
    too (its size depends on the input channels). When ``in_channels`` is
    given, ``link._initialize_params(in_channels)`` shapes them at once;
    else the link does so at its first call.
    """
    with link.init_scope():
        link.W = Parameter(initializers.get_initializer(initialW))
        add_bias(link, nobias, initial_bias, bias_size)
    if in_channels is not None:
        link._initialize_params(in_channels)


def add_bias(link, nobias, initial_bias, size):
    """Register ``link.b``: None with ``nobias``, else of ``size`` (``initial_bias`` None: zeros).

    Called inside ``link.init_scope()``.
    """
    if nobias:
        link.b = None
    else:
        if initial_bias is None:
            initial_bias = 0
        link.b = Parameter(initializers.get_initializer(initial_bias), size)
