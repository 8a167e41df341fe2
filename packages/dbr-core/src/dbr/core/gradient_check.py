"""Numerical gradients, and the checks that compare them with backprop.

:func:`check_backward` follows Chainer's method: it draws one random
direction ``d`` (a unit vector over all inputs and parameters together) and
compares the derivative of ``f`` along ``d`` computed by backprop,
``sum(grad_x * d)``, with a central finite difference of
``t -> f(x + t * d)`` at ``t = 0``. One comparison costs two extra forward
passes whatever the size of the inputs. When it fails, the check repeats the
comparison with the direction restricted to each input and parameter in turn,
so that the message names the argument whose gradient is wrong.

:func:`check_double_backward` runs :func:`check_backward` on the function
mapping the inputs and output gradients to the input gradients, built with
``grad(..., enable_double_backprop=True)``.
"""

import numpy

from dbr.core import backend
from dbr.core._backprop import grad
from dbr.core.configuration import using_config
from dbr.core.variable import Parameter, Variable

__all__ = ["NondifferentiableError", "check_backward", "check_double_backward", "numerical_grad"]

_float64 = numpy.dtype(numpy.float64)

# Orthogonal polynomials of degree 3 and 4 on five equally spaced points: the
# residual of the least-squares quadratic fit of five samples is their
# projection on these two vectors.
_CUBIC = numpy.array([-1.0, 2.0, 0.0, -2.0, 1.0])
_QUARTIC = numpy.array([1.0, -4.0, 6.0, -4.0, 1.0])


class NondifferentiableError(Exception):
    """Raised by :func:`numerical_grad` when ``f`` is not differentiable at the inputs."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_array(x):
    return isinstance(x, backend.get_array_types())


def _describe(x):
    if x is None:
        return "None"
    return f"array(shape={x.shape}, dtype={x.dtype})"


def _output_arrays(ys, who):
    """Return ``f()``'s result as a tuple of arrays (copied) or None."""
    if ys is None or isinstance(ys, Variable) or _is_array(ys):
        ys = (ys,)
    elif not isinstance(ys, (tuple, list)):
        raise TypeError(
            f"{who}: expected the function to return arrays or Variables "
            f"(or a tuple of them), got {type(ys).__name__}"
        )
    out = []
    for i, y in enumerate(ys):
        if isinstance(y, Variable):
            y = y.array
        if y is None:
            out.append(None)
        elif _is_array(y) or isinstance(y, numpy.generic):
            out.append(backend.get_array_module(y).array(y, copy=True))
        else:
            raise TypeError(
                f"{who}: expected output {i} of the function to be an array, "
                f"a Variable or None, got {type(y).__name__}"
            )
    return tuple(out)


def _grad_output_as_float64(gy, i):
    if gy is None:
        return None
    if isinstance(gy, (int, float, numpy.generic)) and not isinstance(gy, bool):
        return float(gy)
    if not _is_array(gy):
        raise TypeError(
            f"numerical_grad: expected grad_outputs[{i}] to be an array, a scalar "
            f"or None, got {type(gy).__name__}"
        )
    return gy.astype(_float64, copy=False)


def _check_samples(samples, grad_outputs):
    first = samples[0]
    if len(first) != len(grad_outputs):
        raise ValueError(
            f"numerical_grad: the function returned {len(first)} outputs but "
            f"{len(grad_outputs)} grad_outputs were given"
        )
    for ys in samples[1:]:
        for i, (y, y0) in enumerate(zip(ys, first)):
            if (y is None) != (y0 is None) or (
                y is not None and (y.shape != y0.shape or y.dtype != y0.dtype)
            ):
                raise ValueError(
                    f"numerical_grad: output {i} of the function changed from "
                    f"{_describe(y0)} to {_describe(y)} between evaluations"
                )
    for i, (y, gy) in enumerate(zip(first, grad_outputs)):
        if y is not None and gy is not None and not isinstance(gy, float) and gy.shape != y.shape:
            raise ValueError(
                f"numerical_grad: expected grad_outputs[{i}] of shape {y.shape} "
                f"(the shape of output {i}), got {gy.shape}"
            )


def _nondifferentiable_message(reason, i_in, index, i_out, eps, samples, element):
    lines = [
        "numerical_grad: tried to compute the numerical gradient at a "
        f"non-differentiable point ({reason}).",
        f"input: {i_in}, index on the input: {index}, output: {i_out}, eps: {eps}",
    ]
    for label, ys in zip(("x-eps", "x-eps/2", "x", "x+eps/2", "x+eps"), samples):
        y = ys[i_out]
        value = y if element is None else y[element]
        lines.append(
            f"  y[{label}]{'' if element is None else f'[{element}]'} = {backend.to_cpu(value)}"
        )
    return "\n".join(lines)


def _unravel(flat_index, shape):
    return tuple([int(i) for i in numpy.unravel_index(int(flat_index), shape)])


def _check_differentiable(samples, i_in, index, eps, diff_atol, diff_rtol):
    """Raise NondifferentiableError unless every output is smooth at the sampled points."""
    for i_out, y0 in enumerate(samples[0]):
        if y0 is None or y0.size == 0:
            continue
        xp = backend.get_array_module(y0)
        stack = xp.stack([ys[i_out].astype(_float64) for ys in samples])
        finite = xp.isfinite(stack)
        if bool((finite != finite[0]).any()):
            bad = _unravel(xp.argmax((finite != finite[0]).any(axis=0)), y0.shape)
            raise NondifferentiableError(
                _nondifferentiable_message(
                    "the output is finite on one side only",
                    i_in,
                    index,
                    i_out,
                    eps,
                    samples,
                    bad if y0.ndim else None,
                )
            )
        finite = finite[0]
        stack = xp.where(finite, stack, 0.0)
        cubic = xp.tensordot(xp.asarray(_CUBIC), stack, axes=1)
        quartic = xp.tensordot(xp.asarray(_QUARTIC), stack, axes=1)
        residual = xp.sqrt((cubic * cubic / 10.0 + quartic * quartic / 70.0) / len(samples))
        spread = stack.max(axis=0) - stack.min(axis=0)
        bad = (residual > diff_atol + diff_rtol * spread) & (spread != 0) & finite
        if bool(bad.any()):
            element = _unravel(xp.argmax(bad), y0.shape)
            raise NondifferentiableError(
                _nondifferentiable_message(
                    "the outputs do not fit a quadratic around it",
                    i_in,
                    index,
                    i_out,
                    eps,
                    samples,
                    element if y0.ndim else None,
                )
            )


def _difference_quotient(samples, grad_outputs, eps):
    total = 0.0
    for i_out, gy in enumerate(grad_outputs):
        if gy is None or samples[0][i_out] is None:
            continue
        ys = [s[i_out].astype(_float64) for s in samples]
        if len(ys) == 2:
            diff = (ys[1] - ys[0]) / (2 * eps)
        else:
            diff = (ys[0] - 8 * ys[1] + 8 * ys[3] - ys[4]) / (6 * eps)
        total += float((diff * gy).sum())
    return total


def numerical_grad(
    f,
    inputs,
    grad_outputs,
    eps=1e-3,
    detect_nondifferentiable=False,
    diff_atol=0,
    diff_rtol=1e-2,
    center_outputs=None,
):
    """Compute the gradient of ``f`` by central finite differences.

    Each element of each input is moved by ``-eps`` and ``+eps`` in place
    (in the input's own dtype, as in Chainer) and ``f`` is evaluated; the
    result is ``sum_j sum(grad_outputs[j] * (y_j(x+eps) - y_j(x-eps)) / (2 eps))``,
    accumulated in float64. The inputs are restored afterwards.

    Args:
        f (callable): a function of no arguments that reads ``inputs`` and
            returns an array, a Variable, or a tuple of them (None allowed).
        inputs (tuple of arrays): floating arrays modified in place.
        grad_outputs (tuple): one array (shape of the output), scalar or None
            (the output is ignored) per output of ``f``.
        eps (float): the step, > 0.
        detect_nondifferentiable (bool): evaluate ``f`` at five points
            (``x``, ``x +- eps/2``, ``x +- eps``) and raise
            :class:`NondifferentiableError` when an output changes finiteness
            or does not fit a quadratic; the gradient then uses the five-point
            stencil, which is also more accurate.
        diff_atol (float): absolute tolerance of the quadratic-fit residual.
        diff_rtol (float): tolerance of the residual relative to the range of
            the output over the five points.
        center_outputs (tuple of arrays): outputs of ``f`` at ``inputs`` to use
            as the centre sample (only with ``detect_nondifferentiable``).

    Returns:
        tuple of arrays: one gradient per input, of its shape and dtype.
    """
    if not eps > 0:
        raise ValueError(f"numerical_grad: expected eps > 0, got {eps}")
    if not isinstance(inputs, (tuple, list)):
        raise TypeError(
            f"numerical_grad: expected inputs to be a tuple or list of arrays, "
            f"got {type(inputs).__name__}"
        )
    inputs = tuple(inputs)
    for i, x in enumerate(inputs):
        if not _is_array(x):
            raise TypeError(
                f"numerical_grad: expected inputs[{i}] to be an array, got {type(x).__name__}"
            )
        if x.dtype.kind != "f":
            raise TypeError(
                f"numerical_grad: expected inputs[{i}] to have a floating dtype, got {x.dtype}"
            )
    grad_outputs = tuple([_grad_output_as_float64(g, i) for i, g in enumerate(grad_outputs)])
    grads = [backend.get_array_module(x).zeros(x.shape, _float64) for x in inputs]

    if detect_nondifferentiable:
        offsets = (-eps, -eps / 2, None, eps / 2, eps)
    else:
        offsets = (-eps, eps)
    with using_config("type_check", False):
        center = None
        if detect_nondifferentiable:
            if center_outputs is None:
                center = _output_arrays(f(), "numerical_grad")
            else:
                center = _output_arrays(tuple(center_outputs), "numerical_grad")
        for i_in, x in enumerate(inputs):
            for index in numpy.ndindex(x.shape):
                orig = x[index].copy()
                samples = []
                for offset in offsets:
                    if offset is None:
                        samples.append(center)
                        continue
                    x[index] = orig + offset
                    try:
                        samples.append(_output_arrays(f(), "numerical_grad"))
                    finally:
                        x[index] = orig
                _check_samples(samples, grad_outputs)
                if detect_nondifferentiable:
                    _check_differentiable(samples, i_in, index, eps, diff_atol, diff_rtol)
                grads[i_in][index] = _difference_quotient(samples, grad_outputs, eps)
    return tuple([g.astype(x.dtype) for g, x in zip(grads, inputs)])


# -- check_backward -------------------------------------------------------------


def _input_arrays(x_data, who):
    xs = []
    for i, x in enumerate(_as_tuple(x_data)):
        if isinstance(x, numpy.generic):
            x = numpy.asarray(x)
        if x is not None and not _is_array(x):
            raise TypeError(
                f"{who}: expected x_data[{i}] to be an array or None, got {type(x).__name__}"
            )
        xs.append(x)
    return tuple(xs)


def _resolve_no_grads(no_grads, xs, who):
    if no_grads is None:
        return [x is None or x.dtype.kind != "f" for x in xs]
    no_grads = list(no_grads)
    if len(no_grads) != len(xs):
        raise ValueError(
            f"{who}: expected no_grads to have one flag per input ({len(xs)}), got {len(no_grads)}"
        )
    for i, (x, no_grad) in enumerate(zip(xs, no_grads)):
        if not no_grad and (x is None or x.dtype.kind != "f"):
            raise ValueError(
                f"{who}: input {i} is {_describe(x)}, which cannot have a "
                "gradient; its no_grads flag must be True"
            )
    return no_grads


def _function_outputs(ys, who):
    ys = _as_tuple(ys)
    for i, y in enumerate(ys):
        if y is not None and not isinstance(y, Variable):
            raise TypeError(
                f"{who}: expected the function to return Variables (or a tuple "
                f"of them), got {type(y).__name__} as output {i}"
            )
    return ys


def _resolve_grad_outputs(y_grad, ys, who):
    if y_grad is None:
        if len(ys) != 1 or ys[0] is None or ys[0].shape != ():
            shapes = ", ".join("None" if y is None else str(y.shape) for y in ys)
            raise ValueError(
                f"{who}: y_grad may be None only for a function with a single "
                f"output of shape () (a loss); got outputs of shapes {shapes}"
            )
        return (ys[0].xp.ones((), ys[0].dtype),)
    gys = _as_tuple(y_grad)
    if len(gys) != len(ys):
        raise ValueError(
            f"{who}: expected one y_grad per output of the function ({len(ys)}), got {len(gys)}"
        )
    for i, (y, gy) in enumerate(zip(ys, gys)):
        if gy is None or y is None:
            continue
        if not _is_array(gy):
            raise TypeError(
                f"{who}: expected y_grad[{i}] to be an array or None, got {type(gy).__name__}"
            )
        if gy.shape != y.shape or gy.dtype != y.dtype:
            raise ValueError(
                f"{who}: expected y_grad[{i}] of shape {y.shape} and dtype "
                f"{y.dtype} (those of output {i}), got shape {gy.shape} and "
                f"dtype {gy.dtype}"
            )
    return gys


def _backprop_grads(ys, gys, targets):
    pairs = [(y, gy) for y, gy in zip(ys, gys) if y is not None and gy is not None]
    if not pairs or not targets:
        return [None] * len(targets)
    outputs = [y for y, _ in pairs]
    grad_outputs = [Variable(gy, requires_grad=False) for _, gy in pairs]
    return grad(outputs, targets, grad_outputs)


def _format_value(x, limit=6):
    if x is None:
        return "None"
    x = backend.to_cpu(x)
    return numpy.array2string(x, threshold=limit, edgeitems=2, separator=", ").replace("\n", " ")


def check_backward(
    func,
    x_data,
    y_grad,
    params=(),
    eps=1e-3,
    atol=1e-5,
    rtol=1e-4,
    no_grads=None,
    dtype=None,
    detect_nondifferentiable=False,
):
    """Check the gradients that backprop computes through ``func`` against numerical ones.

    ``func`` is called on Variables wrapping ``x_data`` and backprop runs
    from its outputs with ``y_grad``. The gradients of the inputs and of
    ``params`` are projected on one random unit direction ``d`` and compared
    with the central difference ``(f(x + eps d) - f(x - eps d)) / (2 eps)``
    weighted by ``y_grad``, which is computed in float64 from inputs cast to
    ``dtype`` (their own dtype if None). It passes when
    ``|numerical - backprop| <= atol + rtol * |backprop|``.

    Args:
        func (callable): takes one Variable per element of ``x_data`` and
            returns a Variable or a tuple of Variables (None allowed).
        x_data (array or tuple of arrays): the inputs; non-floating inputs
            (index arrays) get no gradient.
        y_grad (array, tuple of arrays, or None): one gradient per output,
            each of its output's shape and dtype (None ignores that output);
            None as a whole for a function with one output of shape ().
        params (Parameter or tuple of Parameters): parameters that ``func``
            uses; their gradients are checked too.
        eps (float): the finite-difference step along ``d``.
        atol (float): absolute tolerance.
        rtol (float): relative tolerance.
        no_grads (list of bool): one flag per input; True means the input must
            receive no gradient (it is skipped in the comparison, and an error
            is raised if backprop gives it one). Defaults to True exactly for
            non-floating inputs.
        dtype: a floating dtype in which ``func`` is evaluated for the numerical
            gradient (``numpy.float64`` makes float16 functions checkable).
        detect_nondifferentiable (bool): raise :class:`NondifferentiableError`
            when ``func`` is not differentiable at ``x_data`` along ``d``.

    Raises:
        AssertionError: the gradients differ; the message gives both values
            and names the inputs or parameters whose gradients are wrong.
    """
    xs = _input_arrays(x_data, "check_backward")
    _check_backward(
        func, xs, y_grad, params, eps, atol, rtol, no_grads, dtype, detect_nondifferentiable
    )


def _check_backward(
    func,
    xs,
    y_grad,
    params,
    eps,
    atol,
    rtol,
    no_grads,
    dtype,
    detect_nondifferentiable,
    *,
    who="check_backward",
    names=None,
    grad_names=None,
):
    """check_backward on arrays; ``names`` and ``grad_names`` label the inputs and y_grad."""
    if names is None:
        names = [f"input {i}" for i in range(len(xs))]
    params = _as_tuple(params)
    for i, p in enumerate(params):
        if not isinstance(p, Parameter):
            raise TypeError(
                f"{who}: expected params[{i}] to be a Parameter, got {type(p).__name__}"
            )
    if dtype is not None:
        dtype = numpy.dtype(dtype)
        if dtype.kind != "f":
            raise ValueError(f"{who}: expected dtype to be a floating dtype or None, got {dtype}")
    no_grads = _resolve_no_grads(no_grads, xs, who)

    x_vars = [None if x is None else Variable(x, requires_grad=x.dtype.kind == "f") for x in xs]
    ys = _function_outputs(func(*x_vars), who)
    gys = _resolve_grad_outputs(y_grad, ys, who)
    for i, p in enumerate(params):
        if p.array is None:
            raise ValueError(f"{who}: params[{i}] is still uninitialized after calling func")

    grad_inputs = [i for i, v in enumerate(x_vars) if v is not None and v.requires_grad]
    gxs = _backprop_grads(ys, gys, [x_vars[i] for i in grad_inputs] + list(params))
    # Each checked argument: (label, array, backprop gradient).
    checked = []
    for i, gx in zip(grad_inputs, gxs):
        if no_grads[i]:
            if gx is not None:
                raise RuntimeError(
                    f"{who}: {names[i]} is marked in no_grads but backprop "
                    "computed a gradient for it"
                )
        else:
            checked.append((names[i], xs[i], None if gx is None else gx.array))
    for i, (p, gp) in enumerate(zip(params, gxs[len(grad_inputs) :])):
        label = f"param {i}" + (f" ({p.name!r})" if p.name else "")
        checked.append((label, p.array, None if gp is None else gp.array))
    for label, x, gx in checked:
        if gx is not None and (gx.shape != x.shape or gx.dtype != x.dtype):
            raise AssertionError(
                f"{who}: backprop gave {label} (shape {x.shape}, dtype "
                f"{x.dtype}) a gradient of shape {gx.shape} and dtype "
                f"{gx.dtype}"
            )
    if not checked:
        return

    directions = [numpy.asarray(numpy.random.normal(size=x.shape)) for _, x, _ in checked]
    norm = float(numpy.sqrt(sum(float(numpy.square(d).sum()) for d in directions)))
    if norm:
        directions = [d / norm for d in directions]
    directions = [
        backend.get_device_from_array(x).send(d) for (_, x, _), d in zip(checked, directions)
    ]
    backprop = [
        0.0 if gx is None else float((gx.astype(_float64) * d).sum())
        for (_, _, gx), d in zip(checked, directions)
    ]

    def cast(x):
        if x is None or dtype is None or x.dtype.kind != "f":
            return x
        return x.astype(dtype)

    base_xs = [cast(x) for x in xs]
    base_params = [cast(p.array) for p in params]
    original_params = [p.array for p in params]
    checked_inputs = [i for i in range(len(xs)) if not no_grads[i]]

    def directional_derivative(dirs, detect):
        delta = numpy.zeros((), _float64)

        def shifted(x, d):
            if d is None:
                return x
            xp = backend.get_array_module(x)
            return xp.asarray((x.astype(_float64) + float(delta) * d).astype(x.dtype))

        def evaluate():
            in_vars = [
                None if x is None else Variable(x, requires_grad=x.dtype.kind == "f")
                for x in base_xs
            ]
            for i, d in zip(checked_inputs, dirs):
                in_vars[i] = Variable(shifted(base_xs[i], d))
            try:
                for p, x, d in zip(params, base_params, dirs[len(checked_inputs) :]):
                    p.array = shifted(x, d)
                outputs = _function_outputs(func(*in_vars), who)
            finally:
                for p, x in zip(params, original_params):
                    p.array = x
            return tuple([None if y is None else y.array for y in outputs])

        return float(
            numerical_grad(
                evaluate,
                (delta,),
                gys,
                eps=eps,
                detect_nondifferentiable=detect,
                diff_atol=0,
                diff_rtol=rtol,
            )[0]
        )

    numerical = directional_derivative(directions, detect_nondifferentiable)
    total = sum(backprop)
    if abs(numerical - total) <= atol + rtol * abs(total):
        return

    lines = [
        f"{who} failed (eps={eps}, atol={atol}, rtol={rtol}): the derivative along a "
        "random direction differs",
        f"  numerical: {numerical!r}",
        f"  backprop:  {total!r}",
        f"  |numerical - backprop| = {abs(numerical - total):.6g} > "
        f"atol + rtol * |backprop| = {atol + rtol * abs(total):.6g}",
        "Per argument (direction restricted to one argument):",
    ]
    for k, ((label, x, gx), part) in enumerate(zip(checked, backprop)):
        dirs = [d if j == k else None for j, d in enumerate(directions)]
        num_k = directional_derivative(dirs, False)
        verdict = "ok" if abs(num_k - part) <= atol + rtol * abs(part) else "MISMATCH"
        lines.append(
            f"  {label} (shape {x.shape}, dtype {x.dtype}): numerical={num_k!r}, "
            f"backprop={part!r} -> {verdict}"
            + (" (backprop gave no gradient)" if gx is None else "")
        )
    lines.append("Inputs:")
    lines += [f"  {name} = {_format_value(x)}" for name, x in zip(names, xs)]
    if grad_names is None:
        grad_names = [f"y_grad[{i}]" for i in range(len(gys))]
    lines += [f"  {name} = {_format_value(gy)}" for name, gy in zip(grad_names, gys)]
    raise AssertionError("\n".join(lines))


def check_double_backward(
    func,
    x_data,
    y_grad,
    x_grad_grad,
    params=(),
    params_grad_grad=(),
    eps=1e-3,
    atol=1e-4,
    rtol=1e-3,
    no_grads=None,
    dtype=None,
    detect_nondifferentiable=False,
):
    """Check the second-order gradients of ``func`` (the gradients of its gradients).

    The first-order function maps ``(*x_data, *y_grad)`` to the gradients of
    the floating inputs and of ``params``, computed by
    ``grad(func(*xs), xs + params, y_grad, enable_double_backprop=True)``;
    :func:`check_backward` then checks it with ``x_grad_grad`` and
    ``params_grad_grad`` as its output gradients.

    Args:
        func (callable): as for :func:`check_backward`.
        x_data (array or tuple of arrays): the inputs.
        y_grad (array, tuple of arrays, or None): the output gradients, which
            are inputs of the first-order function (and are checked too);
            None seeds every output with ones and is then not checked.
        x_grad_grad (array or tuple of arrays): one gradient per floating input
            of ``x_data``, of its shape and dtype (None ignores that one).
        params (Parameter or tuple of Parameters): parameters used by ``func``.
        params_grad_grad (array or tuple of arrays): one gradient per parameter.
        eps, atol, rtol, dtype, detect_nondifferentiable: as for
            :func:`check_backward`.
        no_grads (list of bool): flags for the inputs of the first-order
            function: one per element of ``x_data``, optionally followed by
            one per element of ``y_grad`` (False when omitted).

    Raises:
        AssertionError: the second-order gradients differ from numerical ones.
    """
    who = "check_double_backward"
    xs = _input_arrays(x_data, who)
    n_x = len(xs)
    gys = () if y_grad is None else _input_arrays(y_grad, who)
    params = _as_tuple(params)
    x_grad_grad = _as_tuple(x_grad_grad)
    params_grad_grad = _as_tuple(params_grad_grad)
    floating = [x is not None and x.dtype.kind == "f" for x in xs]
    if len(x_grad_grad) != sum(floating):
        raise ValueError(
            f"{who}: expected one x_grad_grad per floating input "
            f"({sum(floating)}), got {len(x_grad_grad)}"
        )
    if len(params_grad_grad) != len(params):
        raise ValueError(
            f"{who}: expected one params_grad_grad per parameter "
            f"({len(params)}), got {len(params_grad_grad)}"
        )
    if no_grads is not None:
        no_grads = list(no_grads)
        if len(no_grads) == n_x:
            no_grads += [False] * len(gys)

    # The first call is the backprop pass, on the arrays as given; later calls
    # evaluate the function numerically, possibly with inputs cast to ``dtype``.
    first_call = [True]
    target_names = [f"x_data[{i}]" for i, f in enumerate(floating) if f] + [
        f"param {i}" for i in range(len(params))
    ]

    def first_order(*inputs):
        strict = first_call[0]
        first_call[0] = False
        x_vars = inputs[:n_x]
        ys = _function_outputs(func(*x_vars), who)
        targets = [x for x, f in zip(x_vars, floating) if f] + list(params)
        if y_grad is None:
            pairs = [(y, None) for y in ys if y is not None]
        else:
            gy_vars = inputs[n_x:]
            if len(gy_vars) != len(ys):
                raise ValueError(
                    f"{who}: expected one y_grad per output of the function "
                    f"({len(ys)}), got {len(gy_vars)}"
                )
            pairs = []
            for i, (y, gy) in enumerate(zip(ys, gy_vars)):
                if y is None or gy is None:
                    continue
                if gy.shape != y.shape or (strict and gy.dtype != y.dtype):
                    raise ValueError(
                        f"{who}: expected y_grad[{i}] of shape {y.shape} and dtype "
                        f"{y.dtype} (those of output {i}), got shape {gy.shape} and "
                        f"dtype {gy.dtype}"
                    )
                pairs.append((y, gy))
        if not pairs:
            return (None,) * len(targets)
        grad_outputs = None if y_grad is None else [gy for _, gy in pairs]
        gxs = grad([y for y, _ in pairs], targets, grad_outputs, enable_double_backprop=True)
        if strict:
            for label, x, gx in zip(target_names, targets, gxs):
                if gx is not None and (gx.shape != x.shape or gx.dtype != x.dtype):
                    raise AssertionError(
                        f"{who}: backprop gave {label} (shape {x.shape}, dtype {x.dtype}) a "
                        f"first-order gradient of shape {gx.shape} and dtype {gx.dtype}"
                    )
        return tuple(gxs)

    names = [f"x_data[{i}]" for i in range(n_x)] + [f"y_grad[{i}]" for i in range(len(gys))]
    grad_names = [f"x_grad_grad[{i}]" for i in range(len(x_grad_grad))] + [
        f"params_grad_grad[{i}]" for i in range(len(params_grad_grad))
    ]
    _check_backward(
        first_order,
        xs + gys,
        x_grad_grad + params_grad_grad,
        params,
        eps,
        atol,
        rtol,
        no_grads,
        dtype,
        detect_nondifferentiable,
        who=who,
        names=names,
        grad_names=grad_names,
    )
