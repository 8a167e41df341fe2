"""Elementwise arithmetic behind Variable's operators: + - * / ** and unary -, abs.

Binary forms take two Variables (or arrays) of the same dtype whose shapes
broadcast; their backward sums gradients back to each input's shape. The
``*Constant`` forms take a scalar, which is cast to the input's dtype.
"""

import numpy

from dbr.core import backend, type_check
from dbr.core.function_node import FunctionNode
from dbr.core.ops._util import as_operand_variable, check_operand, force_array, scalar_of
from dbr.core.ops.broadcast import sum_to
from dbr.core.variable import Variable

_ndarray = numpy.ndarray
_new_variable = Variable.from_array
_eval = type_check.eval
_LightTypes = type_check.light_types


def _convert_value_to_string(value):
    """How a constant operand reads in a label: ``2.0``, ``(-2)`` or ``constant array``."""
    if isinstance(value, Variable):
        value = value._data
    if numpy.isscalar(value):
        return f"({value})" if value < 0 else str(value)
    if isinstance(value, backend.get_array_types()):
        return "constant array"
    raise ValueError(
        "_convert_value_to_string: expected value to be a Variable, a scalar or an array "
        f"(numpy.ndarray or cupy.ndarray), got {type(value).__name__}"
    )


def _check_unary(in_types, float_only=False):
    type_check.argname(in_types, ("x",))
    if float_only:
        type_check.expect(in_types[0].dtype.kind == "f")


class _ConstantOp(FunctionNode):
    """Base of the ops between one input and a scalar ``value``."""

    float_only = False
    label_format = "{}"

    def __init__(self, value):
        self.value = value

    @property
    def label(self):
        """The operator with the constant written in, e.g. ``_ + 2.0``."""
        return self.label_format.format(_convert_value_to_string(self.value))

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        if self.float_only:
            type_check.expect(in_types[0].dtype.kind == "f")


class _Binary(FunctionNode):
    """Base of broadcasting binary ops: records input shapes when they differ."""

    _shapes = None
    float_only = False

    def check_type_forward(self, in_types):
        if type(in_types) is _LightTypes and len(in_types) == 2:
            # The common case on the hot path: two arrays of one dtype and shape.
            lhs, rhs = in_types
            if (
                lhs.dtype is rhs.dtype
                and lhs.shape == rhs.shape
                and (not self.float_only or lhs.dtype.kind == "f")
            ):
                return
        type_check.argname(in_types, ("lhs", "rhs"))
        lhs, rhs = in_types
        if self.float_only:
            type_check.expect(lhs.dtype.kind == "f", lhs.dtype == rhs.dtype)
        else:
            type_check.expect(lhs.dtype == rhs.dtype)
        lhs_shape, rhs_shape = lhs.shape, rhs.shape
        if _eval(lhs_shape) != _eval(rhs_shape):
            type_check.expect_broadcast_shapes(lhs_shape, rhs_shape)

    def _reduce(self, gx, index):
        shapes = self._shapes
        return gx if shapes is None else sum_to(gx, shapes[index])

    def _reduce_all(self, gxs, indexes):
        # The gradients at ``indexes``, summed back to their inputs' shapes.
        return tuple([self._reduce(gx, i) for gx, i in zip(gxs, indexes)])


def _as_array(y):
    # NumPy turns 0-d results into scalars; most results are arrays already.
    return y if type(y) is _ndarray else force_array(y)


class Add(_Binary):
    """``lhs + rhs``."""

    label = "_ + _"

    def forward(self, inputs):
        x0, x1 = inputs
        if x0.shape != x1.shape:
            self._shapes = (x0.shape, x1.shape)
        return (_as_array(x0 + x1),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        shapes = self._shapes
        if shapes is None:
            return (gy,) * len(indexes)
        return tuple([sum_to(gy, shapes[i]) for i in indexes])


class AddConstant(_ConstantOp):
    """``x + c`` for a scalar ``c``."""

    label_format = "_ + {}"

    def forward(self, inputs):
        x = inputs[0]
        return (force_array(x + scalar_of(self.value, x.dtype)),)

    def backward(self, indexes, grad_outputs):
        return grad_outputs


class MultiAdd(FunctionNode):
    """The sum of any number of inputs of one dtype whose shapes broadcast."""

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() >= 1)
        for i in range(1, len(in_types)):
            type_check.expect(in_types[0].dtype == in_types[i].dtype)
        type_check.expect_broadcast_shapes(*[t.shape for t in in_types])

    def forward(self, inputs):
        self._shapes = tuple([x.shape for x in inputs])
        y = inputs[0]
        for x in inputs[1:]:
            y = y + x
        if y is inputs[0]:
            y = y.copy()
        return (force_array(y),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        return tuple([sum_to(gy, self._shapes[i]) for i in indexes])


class Sub(_Binary):
    """``lhs - rhs``."""

    label = "_ - _"

    def forward(self, inputs):
        x0, x1 = inputs
        if x0.shape != x1.shape:
            self._shapes = (x0.shape, x1.shape)
        return (_as_array(x0 - x1),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        return tuple([self._reduce(gy, 0) if i == 0 else self._reduce(-gy, 1) for i in indexes])


class SubFromConstant(_ConstantOp):
    """``c - x`` for a scalar ``c``."""

    label_format = "{} - _"

    def forward(self, inputs):
        x = inputs[0]
        return (force_array(scalar_of(self.value, x.dtype) - x),)

    def backward(self, indexes, grad_outputs):
        return (-grad_outputs[0],)


class Mul(_Binary):
    """``lhs * rhs``."""

    label = "_ * _"

    # Both inputs are always retained: declared once, no per-call attribute.
    _input_indexes_to_retain = (0, 1)

    def forward(self, inputs):
        x0, x1 = inputs
        if x0.shape != x1.shape:
            self._shapes = (x0.shape, x1.shape)
        return (_as_array(x0 * x1),)

    def backward(self, indexes, grad_outputs):
        gxs = self.apply_gradient(MulGrad(indexes), grad_outputs)
        return gxs if self._shapes is None else self._reduce_all(gxs, indexes)


class MulGrad(FunctionNode):
    """The gradients of ``x0 * x1`` at ``indexes`` from ``(x0, x1, gy)``, in one node.

    ``gy * x1`` for ``x0`` (index 0) and ``gy * x0`` for ``x1`` (index 1), in
    the order of ``indexes``; as Mul's outputs, not summed to the inputs' shapes.
    """

    _input_indexes_to_retain = (0, 1, 2)

    def __init__(self, indexes=(0, 1)):
        self.indexes = indexes

    def forward(self, inputs):
        x0, x1, gy = inputs
        indexes = self.indexes
        if len(indexes) == 2:
            return _as_array(gy * x1), _as_array(gy * x0)
        return (_as_array(gy * (x1 if indexes[0] == 0 else x0)),)

    def backward(self, indexes, grad_outputs):
        x0, x1, gy = self.get_retained_inputs()
        ggx = dict(zip(self.indexes, grad_outputs))
        ggx0, ggx1 = ggx.get(0), ggx.get(1)
        ret = []
        for i in indexes:
            if i == 0:
                terms = [] if ggx1 is None else [ggx1 * gy]
            elif i == 1:
                terms = [] if ggx0 is None else [ggx0 * gy]
            else:
                terms = [gg * x for gg, x in ((ggx0, x1), (ggx1, x0)) if gg is not None]
            total = _sum_terms(terms)
            ret.append(None if total is None else sum_to(total, (x0, x1, gy)[i].shape))
        return tuple(ret)


class MulConstant(_ConstantOp):
    """``x * c`` for a scalar ``c``."""

    label_format = "_ * {}"

    def forward(self, inputs):
        x = inputs[0]
        return (force_array(x * scalar_of(self.value, x.dtype)),)

    def backward(self, indexes, grad_outputs):
        return (grad_outputs[0] * self.value,)


class Div(_Binary):
    """``lhs / rhs`` (floating dtypes)."""

    label = "_ / _"

    float_only = True
    _input_indexes_to_retain = (0, 1)

    def forward(self, inputs):
        x0, x1 = inputs
        if x0.shape != x1.shape:
            self._shapes = (x0.shape, x1.shape)
        return (_as_array(x0 / x1),)

    def backward(self, indexes, grad_outputs):
        gxs = self.apply_gradient(DivGrad(indexes), grad_outputs)
        return gxs if self._shapes is None else self._reduce_all(gxs, indexes)


class DivGrad(FunctionNode):
    """The gradients of ``x0 / x1`` at ``indexes`` from ``(x0, x1, gy)``, in one node.

    ``gy / x1`` for ``x0`` (index 0) and ``-gy * x0 / x1 ** 2`` for ``x1``
    (index 1), in the order of ``indexes``; as Div's outputs, not summed to the
    inputs' shapes.
    """

    # A gradient node on the hot path of backward: retains all its inputs, declared once.
    _input_indexes_to_retain = (0, 1, 2)

    def __init__(self, indexes=(0, 1)):
        self.indexes = indexes

    def forward(self, inputs):
        x0, x1, gy = inputs
        gx0 = force_array(gy / x1)
        indexes = self.indexes
        if indexes == (0,):
            return (gx0,)
        gx1 = force_array(-gx0 * x0 / x1)
        return (gx0, gx1) if len(indexes) == 2 else (gx1,)

    def backward(self, indexes, grad_outputs):
        x0, x1, gy = self.get_retained_inputs()
        ggx = dict(zip(self.indexes, grad_outputs))
        ggx0, ggx1 = ggx.get(0), ggx.get(1)
        inv_x1 = 1.0 / x1
        ret = []
        for i in indexes:
            terms = []
            if i == 0 and ggx1 is not None:
                terms.append(-ggx1 * gy * inv_x1 * inv_x1)
            elif i == 1:
                if ggx0 is not None:
                    terms.append(-ggx0 * gy * inv_x1 * inv_x1)
                if ggx1 is not None:
                    terms.append(ggx1 * gy * x0 * inv_x1 * inv_x1 * inv_x1 * 2.0)
            elif i == 2:
                if ggx0 is not None:
                    terms.append(ggx0 * inv_x1)
                if ggx1 is not None:
                    terms.append(-ggx1 * x0 * inv_x1 * inv_x1)
            total = _sum_terms(terms)
            ret.append(None if total is None else sum_to(total, (x0, x1, gy)[i].shape))
        return tuple(ret)


def _sum_terms(terms):
    if not terms:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


class DivFromConstant(_ConstantOp):
    """``c / x`` for a scalar ``c`` (floating dtypes)."""

    label_format = "{} / _"

    float_only = True

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        return (force_array(scalar_of(self.value, x.dtype) / x),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return (grad_outputs[0] * (-self.value) / (x * x),)


class PowVarVar(_Binary):
    """``lhs ** rhs`` with both operands Variables (floating dtypes)."""

    label = "_ ** _"

    float_only = True

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        self.retain_outputs((0,))
        x0, x1 = inputs
        if x0.shape != x1.shape:
            self._shapes = (x0.shape, x1.shape)
        return (force_array(x0**x1),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        x0, x1 = self.get_retained_inputs()
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(self._reduce(gy * x1 * x0 ** (x1 - 1), 0))
            else:
                y = self.get_retained_outputs()[0]
                ret.append(self._reduce(gy * y * log(x0), 1))
        return tuple(ret)


class PowVarConst(_ConstantOp):
    """``x ** c`` for a scalar ``c`` (floating dtypes)."""

    label_format = "_ ** {}"

    float_only = True
    _input_indexes_to_retain = (0,)

    def forward(self, inputs):
        x = inputs[0]
        return (_as_array(x ** scalar_of(self.value, x.dtype)),)

    def backward(self, indexes, grad_outputs):
        return self.apply_gradient(PowVarConstGrad(self.value), grad_outputs)


class PowVarConstGrad(FunctionNode):
    """``gy * c * x ** (c - 1)``: the gradient of ``x ** c``, itself differentiable."""

    _input_indexes_to_retain = (0, 1)

    def __init__(self, value):
        self.value = value

    def forward(self, inputs):
        x, gy = inputs
        c = scalar_of(self.value, x.dtype)
        if self.value == 2:
            gx = x * gy
            gx *= c
        else:
            gx = x ** scalar_of(self.value - 1, x.dtype)
            gx *= c
            gx *= gy
        return (force_array(gx, x.dtype),)

    def backward(self, indexes, grad_outputs):
        x, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        c = self.value
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(ggx * gy * (c * (c - 1)) * x ** (c - 2) if c != 1 else None)
            else:
                ret.append(ggx * c * x ** (c - 1))
        return tuple(ret)


class PowConstVar(_ConstantOp):
    """``c ** x`` for a scalar ``c`` (floating dtypes)."""

    label_format = "{} ** _"

    float_only = True

    def forward(self, inputs):
        self.retain_outputs((0,))
        x = inputs[0]
        return (force_array(scalar_of(self.value, x.dtype) ** x),)

    def backward(self, indexes, grad_outputs):
        y = self.get_retained_outputs()[0]
        return (grad_outputs[0] * y * float(numpy.log(self.value)),)


class Neg(FunctionNode):
    """``-x``."""

    label = "__neg__"

    def check_type_forward(self, in_types):
        _check_unary(in_types)

    def forward(self, inputs):
        return (force_array(-inputs[0]),)

    def backward(self, indexes, grad_outputs):
        return (-grad_outputs[0],)


class Absolute(FunctionNode):
    """``|x|`` (floating dtypes); the gradient at 0 is 0."""

    label = "|_|"

    def check_type_forward(self, in_types):
        _check_unary(in_types, float_only=True)

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (force_array(abs(inputs[0])),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        sign = _new_variable(x.xp.sign(x._data), False)
        return (grad_outputs[0] * sign,)


class Log(FunctionNode):
    """The natural logarithm ``log(x)`` (floating dtypes)."""

    label = "log"

    def check_type_forward(self, in_types):
        _check_unary(in_types, float_only=True)

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        xp = numpy if type(x) is _ndarray else _xp(x)
        return (force_array(xp.log(x)),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        return (grad_outputs[0] / x,)


def _xp(x):
    from dbr.core import backend

    return backend.get_array_module(x)


# -- wrappers: these are also Variable's operator methods ------------------------


def _is_scalar(value):
    return isinstance(value, (int, float, numpy.generic)) and not isinstance(value, numpy.ndarray)


def add(*xs):
    """Elementwise sum of Variables (or arrays/scalars) whose shapes broadcast.

    ``add(a, b)`` is ``a + b``; with more than two arguments all are summed.

    Args:
        *xs: Variables or arrays of one dtype (a scalar is allowed as the
            second of two operands).

    Returns:
        Variable: the broadcast sum.

    >>> import numpy as np
    >>> add(np.array([1.0, 2.0], np.float32), 1.0).array
    array([2., 3.], dtype=float32)
    """
    if len(xs) == 2:
        lhs, rhs = xs
        if isinstance(rhs, Variable):
            return Add().apply((lhs, rhs))[0]
        if _is_scalar(rhs):
            return AddConstant(rhs).apply((lhs,))[0]
        check_operand(rhs, "add")
        return Add().apply((lhs, as_operand_variable(rhs, _as_var(lhs))))[0]
    return MultiAdd().apply(xs)[0]


def _as_var(x):
    return x if isinstance(x, Variable) else _new_variable(x, False)


def sub(lhs, rhs):
    """Elementwise ``lhs - rhs`` (shapes broadcast; ``rhs`` may be a scalar)."""
    if isinstance(rhs, Variable):
        return Sub().apply((lhs, rhs))[0]
    if _is_scalar(rhs):
        return AddConstant(-rhs).apply((lhs,))[0]
    check_operand(rhs, "sub")
    return Sub().apply((lhs, as_operand_variable(rhs, _as_var(lhs))))[0]


def rsub(self, other):
    """Elementwise ``other - self`` (the reflected form of ``-``)."""
    if _is_scalar(other):
        return SubFromConstant(other).apply((self,))[0]
    check_operand(other, "rsub")
    if not isinstance(other, Variable):
        other = as_operand_variable(other, self)
    return Sub().apply((other, self))[0]


def mul(lhs, rhs):
    """Elementwise ``lhs * rhs`` (shapes broadcast; ``rhs`` may be a scalar)."""
    if isinstance(rhs, Variable):
        return Mul().apply((lhs, rhs))[0]
    if _is_scalar(rhs):
        return MulConstant(rhs).apply((lhs,))[0]
    check_operand(rhs, "mul")
    return Mul().apply((lhs, as_operand_variable(rhs, _as_var(lhs))))[0]


def div(lhs, rhs):
    """Elementwise ``lhs / rhs`` (shapes broadcast; ``rhs`` may be a scalar)."""
    if isinstance(rhs, Variable):
        return Div().apply((lhs, rhs))[0]
    if _is_scalar(rhs):
        return MulConstant(1.0 / rhs).apply((lhs,))[0]
    check_operand(rhs, "div")
    return Div().apply((lhs, as_operand_variable(rhs, _as_var(lhs))))[0]


def rdiv(self, other):
    """Elementwise ``other / self`` (the reflected form of ``/``)."""
    if _is_scalar(other):
        return DivFromConstant(other).apply((self,))[0]
    check_operand(other, "rdiv")
    if not isinstance(other, Variable):
        other = as_operand_variable(other, self)
    return Div().apply((other, self))[0]


def floordiv(lhs, rhs):
    """Elementwise ``lhs // rhs``: the floor of ``lhs / rhs``.

    As in Chainer, the result is not differentiable: it is a new Variable
    that does not require grad and has no creator.
    """
    return _floor(div(lhs, rhs))


def rfloordiv(self, other):
    """Elementwise ``other // self`` (the reflected form of ``//``; not differentiable)."""
    return _floor(rdiv(self, other))


def _floor(y):
    data = y._data
    xp = numpy if type(data) is _ndarray else _xp(data)
    return _new_variable(force_array(xp.floor(data), data.dtype), False)


def pow(lhs, rhs):  # the operator's name
    """Elementwise ``lhs ** rhs`` (shapes broadcast; ``rhs`` may be a scalar)."""
    if isinstance(rhs, Variable):
        return PowVarVar().apply((lhs, rhs))[0]
    if _is_scalar(rhs):
        return PowVarConst(rhs).apply((lhs,))[0]
    check_operand(rhs, "pow")
    return PowVarVar().apply((lhs, as_operand_variable(rhs, _as_var(lhs))))[0]


def rpow(self, other):
    """Elementwise ``other ** self`` (the reflected form of ``**``)."""
    if _is_scalar(other):
        return PowConstVar(other).apply((self,))[0]
    check_operand(other, "rpow")
    if not isinstance(other, Variable):
        other = as_operand_variable(other, self)
    return PowVarVar().apply((other, self))[0]


def neg(x):
    """Elementwise ``-x``."""
    return Neg().apply((x,))[0]


def absolute(x):
    """Elementwise ``|x|``; the gradient at 0 is 0.

    >>> import numpy as np
    >>> absolute(np.array([-1.5, 2.0], np.float32)).array
    array([1.5, 2. ], dtype=float32)
    """
    return Absolute().apply((x,))[0]


def log(x):
    """Elementwise natural logarithm of a floating Variable or array.

    >>> import numpy as np
    >>> log(np.array([1.0], np.float32)).array
    array([0.], dtype=float32)
    """
    return Log().apply((x,))[0]
