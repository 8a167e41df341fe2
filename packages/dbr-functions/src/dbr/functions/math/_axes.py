"""Axis arguments of the reductions: validation and the shapes they imply.

The conventions follow ``dbr.core.ops.sum``: a malformed ``axis`` is a
TypeError, a repeated axis a ValueError (raised when the function is built,
or by the type check when a negative and a non-negative value name the same
axis, as in Chainer), and an axis outside ``[-x.ndim, x.ndim)`` an
InvalidType from the type check, which names the function.
"""

from dbr.core import FunctionNode, type_check


def normalize_axis(axis, who):
    """Return ``axis`` as None or a tuple of ints, or raise naming ``who``."""
    if axis is None:
        return None
    if isinstance(axis, int):
        return (axis,)
    if isinstance(axis, tuple) and all(isinstance(a, int) for a in axis):
        if len(set(axis)) != len(axis):
            raise ValueError(f"{who}: duplicate value in axis {axis}")
        return axis
    raise TypeError(f"{who}: expected axis to be None, an int or a tuple of ints, got {axis!r}")


def normalize_single_axis(axis, who):
    """Return ``axis`` when it is None or an int, or raise a TypeError naming ``who``."""
    if axis is None or isinstance(axis, int):
        return axis
    raise TypeError(f"{who}: expected axis to be None or an int, got {axis!r}")


def check_axes(x_type, axes, who=None):
    """Check that ``axes`` (None: all) are distinct axes of ``x``.

    Raises:
        InvalidType: an axis is out of range.
        ValueError: two values name the same axis (``1`` and ``-2`` of a 3-d
            ``x``), naming ``who``.
    """
    if axes is None:
        return
    ndim = type_check.eval(x_type.ndim)
    for a in axes:
        if not -ndim <= a < ndim:
            raise type_check.InvalidType(f"-x.ndim <= {a} < x.ndim", f"x.ndim == {ndim}")
    if len({a % ndim for a in axes}) != len(axes):
        prefix = f"{who}: " if who else ""
        raise ValueError(f"{prefix}duplicate value in axis {axes} of an x of {ndim} axes")


def check_nonempty_reduction(x_type, axes):
    """Raise InvalidType when the reduction over ``axes`` would have no elements."""
    shape = type_check.eval(x_type.shape)
    reduced = range(len(shape)) if axes is None else axes
    for a in reduced:
        if shape[a] == 0:
            raise type_check.InvalidType(
                f"x.shape[{a}] > 0 (a reduced axis)", f"x.shape == {shape}"
            )


def positive_axes(axes, ndim):
    """``axes`` (None: all) as a sorted tuple of non-negative ints."""
    if axes is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in axes))


def kept_shape(shape, axes):
    """``shape`` with the axes in ``axes`` (None: all) replaced by 1 (keepdims)."""
    reduced = positive_axes(axes, len(shape))
    return tuple([1 if i in reduced else n for i, n in enumerate(shape)])


def reduced_size(shape, axes):
    """The number of elements each reduction over ``axes`` (None: all) combines."""
    n = 1
    for a in positive_axes(axes, len(shape)):
        n *= shape[a]
    return n


def check_float_input_axes(in_types, axes, who=None):
    """Type-check exactly one floating input ``x`` and ``axes`` (None: all) against it.

    A repeated axis is a ValueError naming ``who`` (see :func:`check_axes`).
    """
    type_check.argname(in_types, ("x",))
    type_check.expect(in_types[0].dtype.kind == "f")
    check_axes(in_types[0], axes, who)


def flip(x, axis):
    """``x`` reversed along ``axis``, a view."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


class Reduction(FunctionNode):
    """Base of the reductions of one floating ``x`` over ``axis`` (None: all axes).

    A subclass names itself in ``who`` (in argument errors) and sets
    ``nonempty`` when each reduced axis must have elements.
    """

    who = None
    nonempty = False

    def __init__(self, axis=None, keepdims=False):
        self.axis = normalize_axis(axis, self.who)
        self.keepdims = keepdims

    def check_type_forward(self, in_types):
        check_float_input_axes(in_types, self.axis, self.who)
        if self.nonempty:
            check_nonempty_reduction(in_types[0], self.axis)


class Scan(FunctionNode):
    """Base of the cumulative functions along one ``axis`` of a floating ``x``.

    With ``reverse`` the scan runs from the end of the axis.
    """

    def __init__(self, axis, reverse=False):
        self.axis = axis
        self.reverse = reverse

    def check_type_forward(self, in_types):
        check_float_input_axes(in_types, (self.axis,))
