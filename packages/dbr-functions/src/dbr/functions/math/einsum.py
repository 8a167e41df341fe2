"""einsum: Einstein summation, differentiable to any order.

The nodes work on subscripts with explicit letters only (``...`` is replaced
by unused letters before they are built). :class:`EinSum` is the summation
:func:`einsum` builds; :class:`DiagEinSum` is the summation whose output
subscript may repeat a letter (the result is zero off that diagonal) or hold
letters that no input has (the result is constant along them). Such outputs
are what the gradient of an einsum is: the gradient of either node is a
``DiagEinSum``.
"""

import numpy

from dbr.core import FunctionNode, Variable, type_check
from dbr.core.backend import get_array_module, get_array_types

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ELLIPSIS = "@"
_float16 = numpy.dtype(numpy.float16)


class EinSum(FunctionNode):
    """``y[out] = sum over the other letters of prod_k x_k[in_k]``.

    Args:
        in_subs (tuple of str): one subscript per input, letters only.
        out_sub (str): the output subscript, letters of the inputs, each once.
    """

    out_sizes = {}

    def __init__(self, in_subs, out_sub):
        self.in_subs = in_subs
        self.out_sub = out_sub

    def check_type_forward(self, in_types):
        names = tuple([f"x{i}" for i in range(len(in_types))])
        type_check.argname(in_types, names)
        type_check.expect(in_types.size() == len(self.in_subs))
        first = {}
        for x_type, sub in zip(in_types, self.in_subs):
            type_check.expect(
                x_type.dtype.kind == "f",
                x_type.dtype == in_types[0].dtype,
                x_type.ndim == len(sub),
            )
            for axis, letter in enumerate(sub):
                size = x_type.shape[axis]
                if letter in first:
                    type_check.expect(size == first[letter])
                else:
                    first[letter] = size

    def forward(self, inputs):
        if len(inputs) > 1:
            self.retain_inputs(tuple(range(len(inputs))))
        self._shapes = tuple([x.shape for x in inputs])
        xp = get_array_module(*inputs)
        dtype = inputs[0].dtype
        if dtype == _float16:
            inputs = tuple([x.astype(numpy.float32) for x in inputs])
        out = self.out_sub
        unique = "".join(dict.fromkeys(out))
        present = "".join([c for c in unique if any(c in s for s in self.in_subs)])
        # NumPy contracts several operands pairwise only when asked to (CuPy always does).
        options = {"optimize": True} if xp is numpy and len(inputs) > 2 else {}
        if unique == out and present == out:
            y = xp.einsum(",".join(self.in_subs) + "->" + out, *inputs, **options)
            return (xp.asarray(y).astype(dtype, copy=False),)
        core = xp.einsum(",".join(self.in_subs) + "->" + present, *inputs, **options)
        sizes = dict(self.out_sizes)
        for sub, x in zip(self.in_subs, inputs):
            sizes.update(zip(sub, x.shape))
        y = xp.zeros(tuple([sizes[c] for c in out]), dtype)
        # A view of y with one axis per distinct letter, walking its diagonals.
        strides = tuple([sum([y.strides[k] for k, d in enumerate(out) if d == c]) for c in unique])
        view = xp.lib.stride_tricks.as_strided(y, tuple([sizes[c] for c in unique]), strides)
        view[...] = core[tuple([slice(None) if c in present else None for c in unique])]
        return (y,)

    def backward(self, indexes, grad_outputs):
        inputs = self.get_retained_inputs()
        gy = grad_outputs[0]
        ret = []
        for i in indexes:
            subs = list(self.in_subs)
            subs[i] = self.out_sub
            operands = list(inputs) if inputs else [None]
            operands[i] = gy
            node = DiagEinSum(",".join(subs), self.in_subs[i], self._shapes[i])
            ret.append(node.apply(tuple(operands))[0])
        return tuple(ret)


class DiagEinSum(EinSum):
    """An :class:`EinSum` whose output may repeat letters or hold letters no input has.

    ``y`` is zero off the diagonals of a repeated letter and constant along
    a letter no input has; the gradient of an einsum is such a summation.

    Args:
        in_subs (str): the input subscripts joined by commas (``'ij,jk'``;
            ``''`` is one 0-d input).
        out_sub (str): the output subscript.
        out_shape (tuple of int): the output's shape, which gives the sizes
            of the letters that no input has.
    """

    def __init__(self, in_subs, out_sub, out_shape):
        super().__init__(tuple(in_subs.split(",")), out_sub)
        self.out_sizes = dict(zip(out_sub, out_shape))


def _symbol(label):
    if label is Ellipsis:
        return _ELLIPSIS
    if isinstance(label, int) and not isinstance(label, bool) and 0 <= label < len(_LETTERS):
        return _LETTERS[label]
    raise TypeError(
        f"einsum: expected subscript lists of ints in [0, {len(_LETTERS)}) or Ellipsis, "
        f"got {label!r}"
    )


def _parse(operands):
    """Return (input terms, output term or None, arrays); '...' becomes '@'."""
    if not operands:
        raise ValueError("einsum: expected subscripts and at least one operand, got nothing")
    if isinstance(operands[0], str):
        subscripts = operands[0].replace(" ", "")
        arrays = operands[1:]
        for c in subscripts:
            if c not in _LETTERS and c not in ".,->":
                raise ValueError(f"einsum: {c!r} is not a valid subscript (use letters)")
        if "-" in subscripts or ">" in subscripts:
            if subscripts.count("->") != 1 or subscripts.count("-") != 1:
                raise ValueError(f"einsum: expected at most one '->', got {operands[0]!r}")
            inputs, output = subscripts.split("->")
        else:
            inputs, output = subscripts, None
        inputs = inputs.replace("...", _ELLIPSIS)
        output = None if output is None else output.replace("...", _ELLIPSIS)
        if "." in inputs or (output is not None and "." in output):
            raise ValueError(f"einsum: '.' is only allowed as '...', got {operands[0]!r}")
        terms = inputs.split(",")
    else:
        rest = list(operands)
        arrays, terms = [], []
        while len(rest) >= 2:
            arrays.append(rest.pop(0))
            terms.append("".join([_symbol(s) for s in rest.pop(0)]))
        output = "".join([_symbol(s) for s in rest[0]]) if rest else None
    if len(terms) != len(arrays):
        raise ValueError(
            f"einsum: expected one operand per subscript term ({len(terms)}), got {len(arrays)}"
        )
    for i, x in enumerate(arrays):
        if not isinstance(x, (Variable, *get_array_types())):
            raise TypeError(
                f"einsum: expected operand {i} to be a Variable or an array, "
                f"got {type(x).__name__}"
            )
    for t in terms:
        if t.count(_ELLIPSIS) > 1:
            raise ValueError("einsum: expected at most one '...' per operand")
    if output is not None:
        for c in output:
            if output.count(c) > 1:
                raise ValueError(f"einsum: output subscript {c!r} appears more than once")
            if not any(c in t for t in terms):
                name = "..." if c == _ELLIPSIS else repr(c)
                raise ValueError(f"einsum: output subscript {name} does not appear in the inputs")
    return terms, output, arrays


def _resolve_ellipsis(terms, output, arrays):
    """Replace '@' by unused letters (right-aligned), and build the implicit output."""
    # Every '...' stands for the same axes (no broadcasting): one with fewer
    # axes than the widest gets too many letters, which the type check of
    # EinSum then reports.
    counts = [max(x.ndim - len(t) + 1, 0) for t, x in zip(terms, arrays) if _ELLIPSIS in t]
    used = set("".join(terms))
    free = [c for c in _LETTERS if c not in used]
    width = max(counts, default=0)
    if width > len(free):
        raise ValueError("einsum: too many axes for the available subscript letters")
    ellipsis = "".join(free[:width])
    resolved = [t.replace(_ELLIPSIS, ellipsis) for t in terms]
    if output is None:
        letters = "".join(t.replace(_ELLIPSIS, "") for t in terms)
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ellipsis + "".join(once)
    elif width and _ELLIPSIS not in output:
        raise ValueError(
            f"einsum: summing over the {width} axes of '...' is not supported "
            "(its meaning differs between NumPy versions); keep '...' in the output"
        )
    else:
        output = output.replace(_ELLIPSIS, ellipsis)
    return tuple(resolved), output


def einsum(*operands):
    """Einstein summation over the operands, as :func:`numpy.einsum`.

    Two forms are accepted:

    - ``einsum(subscripts, x0, x1, ...)``, e.g. ``einsum('ij,jk->ik', a, b)``;
    - ``einsum(x0, sublist0, x1, sublist1, ..., [sublistout])`` with lists of
      ints (0-25 for 'A'-'Z', 26-51 for 'a'-'z') and Ellipsis.

    ``...`` stands for the remaining axes of each operand; they must be the
    same number, of equal sizes, in every operand that has ``...`` (no
    broadcasting). Without ``->`` the output is ``...`` followed by the
    letters that appear once, sorted; an explicit output must keep ``...``
    when it covers any axis (as in Chainer: summing over it is undefined). A
    letter repeated in one operand takes its diagonal. The result is
    differentiable to any order.

    Args:
        operands: the subscripts and the operands (Variables or arrays of one
            floating dtype; float16 is computed in float32).

    Returns:
        Variable: the summation, of the operands' dtype.

    >>> import numpy as np
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> einsum('ij,ij->i', a, a).array
    array([ 5., 50.], dtype=float32)
    >>> einsum('ij->ji', a).shape
    (3, 2)
    >>> einsum(a, [0, 1], a, [2, 1], [0, 2]).shape
    (2, 2)
    """
    terms, output, arrays = _parse(operands)
    in_subs, out_sub = _resolve_ellipsis(terms, output, arrays)
    return EinSum(in_subs, out_sub).apply(tuple(arrays))[0]
