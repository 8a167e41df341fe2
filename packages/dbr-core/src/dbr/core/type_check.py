"""Type checking of function inputs through symbolic expressions.

A function checks its inputs in ``check_type_forward(in_types)``, where each
element of ``in_types`` is a :class:`Variable` wrapping a :class:`TypeInfo`.
Operators on such variables do not compute anything: they build an
expression tree (:class:`Expr`), which :func:`expect` evaluates. When a
condition fails, the expression is printed in Python syntax next to the
values it compared::

    type_check.argname(in_types, ('x', 'W'))
    x_type, w_type = in_types
    type_check.expect(
        x_type.dtype.kind == 'f',
        x_type.ndim == 2,
        x_type.shape[1] == w_type.shape[1],
    )

fails, for a three-dimensional float ``x``, with::

    Expect: x.ndim == 2
    Actual: 3 != 2

FunctionNode first runs the same check on :func:`light_types`, the input
arrays themselves, so that conditions are plain bools and no expression is
built; only a failing check is run again on :func:`get_types` for the message.
Checks that work in both forms use :func:`eval` and :func:`prod` rather than
``Expr.eval()``.
"""

import math
import operator
import threading

import numpy

__all__ = [
    "BinaryOperator",
    "Call",
    "Constant",
    "Expr",
    "GetItem",
    "InvalidType",
    "LightTypeInfoTuple",
    "Member",
    "Testable",
    "TypeInfo",
    "TypeInfoTuple",
    "UnaryOperator",
    "Variable",
    "argname",
    "eval",
    "expect",
    "expect_broadcast_shapes",
    "get_function_check_context",
    "get_types",
    "light_types",
    "make_variable",
    "prod",
    "same_types",
]

# Python's operator precedence, lowest first; an operand is parenthesized
# only where its own priority is too low for its position.
_PRIORITY_COMPARE = 1
_PRIORITY_OR = 2
_PRIORITY_XOR = 3
_PRIORITY_AND = 4
_PRIORITY_SHIFT = 5
_PRIORITY_ADD = 6
_PRIORITY_MUL = 7
_PRIORITY_UNARY = 8
_PRIORITY_POW = 9
_PRIORITY_ATOM = 10

_BINARY_OPERATORS = {
    "|": (_PRIORITY_OR, operator.or_),
    "^": (_PRIORITY_XOR, operator.xor),
    "&": (_PRIORITY_AND, operator.and_),
    "<<": (_PRIORITY_SHIFT, operator.lshift),
    ">>": (_PRIORITY_SHIFT, operator.rshift),
    "+": (_PRIORITY_ADD, operator.add),
    "-": (_PRIORITY_ADD, operator.sub),
    "*": (_PRIORITY_MUL, operator.mul),
    "/": (_PRIORITY_MUL, operator.truediv),
    "//": (_PRIORITY_MUL, operator.floordiv),
    "%": (_PRIORITY_MUL, operator.mod),
    "**": (_PRIORITY_POW, operator.pow),
}

# Each comparison with its negation, which is what a failure prints.
_COMPARISONS = {
    "==": ("!=", operator.eq),
    "!=": ("==", operator.ne),
    "<": (">=", operator.lt),
    "<=": (">", operator.le),
    ">": ("<=", operator.gt),
    ">=": ("<", operator.ge),
}

_UNARY_OPERATORS = {
    "-": operator.neg,
    "+": operator.pos,
    "~": operator.invert,
}

_local = threading.local()


class InvalidType(Exception):
    """Raised when the inputs of a function fail its type check.

    Args:
        expect (str): The condition that was expected to hold.
        actual (str): The values that were actually found.
        msg (str): The whole message; by default it is made of ``expect``
            and ``actual``.

    Attributes:
        expect (str): The condition that was expected to hold.
        actual (str): The values that were actually found.
        msg (str or None): The message given, if any.
    """

    def __init__(self, expect, actual, msg=None):
        super().__init__(expect, actual, msg)
        self.expect = expect
        self.actual = actual
        self.msg = msg

    def __str__(self):
        if self.msg is not None:
            return self.msg
        return f"Expect: {self.expect}\nActual: {self.actual}"

    def __reduce__(self):
        return type(self), (self.expect, self.actual, self.msg)


def _format_constant(value):
    """Writes ``value`` as Python source, for the Expect line."""
    if isinstance(value, Expr):
        return str(value)
    if type(value) is tuple:
        if len(value) == 1:
            return f"({_format_constant(value[0])},)"
        return "(" + ", ".join(_format_constant(v) for v in value) + ")"
    if type(value) is list:
        return "[" + ", ".join(_format_constant(v) for v in value) + "]"
    if isinstance(value, numpy.dtype):
        name = value.type.__name__
        if getattr(numpy, name, None) is value.type and numpy.dtype(value.type) == value:
            return "numpy." + name
        return "numpy." + repr(value)
    if isinstance(value, type):
        if getattr(numpy, value.__name__, None) is value:
            return "numpy." + value.__name__
        if value.__module__ == "builtins":
            return value.__qualname__
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def _format_value(value):
    """Writes an evaluated ``value`` for the Actual line: strings unquoted,
    dtypes and scalar types by name."""
    if type(value) is tuple:
        if len(value) == 1:
            return f"({_format_value(value[0])},)"
        return "(" + ", ".join(_format_value(v) for v in value) + ")"
    if type(value) is list:
        return "[" + ", ".join(_format_value(v) for v in value) + "]"
    if isinstance(value, type):
        return value.__name__
    return str(value)


def _format_key(key):
    if type(key) is tuple:
        if len(key) == 1:
            return _format_index(key[0]) + ","
        if not key:
            return "()"
        return ", ".join(_format_index(k) for k in key)
    return _format_index(key)


def _format_index(index):
    if isinstance(index, slice):
        start = "" if index.start is None else _format_constant(index.start)
        stop = "" if index.stop is None else _format_constant(index.stop)
        if index.step is None:
            return f"{start}:{stop}"
        return f"{start}:{stop}:{_format_constant(index.step)}"
    if index is Ellipsis:
        return "..."
    return _format_constant(index)


def _evaluate(value):
    """Evaluates the expressions in ``value``, also inside tuples, lists and
    slices."""
    if isinstance(value, Expr):
        return value.eval()
    if type(value) is tuple:
        return tuple(_evaluate(v) for v in value)
    if type(value) is list:
        return [_evaluate(v) for v in value]
    if isinstance(value, slice):
        return slice(_evaluate(value.start), _evaluate(value.stop), _evaluate(value.step))
    return value


def _to_expr(value):
    return value if isinstance(value, Expr) else Constant(value)


def _parenthesize(expr, min_priority):
    text = str(expr)
    return text if expr._priority >= min_priority else f"({text})"


def _binary(symbol):
    def method(self, other):
        return BinaryOperator(symbol, self, other)

    method.__name__ = f"operator {symbol}"
    return method


def _reflected_binary(symbol):
    def method(self, other):
        return BinaryOperator(symbol, other, self)

    method.__name__ = f"reflected operator {symbol}"
    return method


def _comparison(symbol):
    def method(self, other):
        return Testable(symbol, self, other)

    method.__name__ = f"comparison {symbol}"
    return method


def _unary(symbol):
    def method(self):
        return UnaryOperator(symbol, self)

    method.__name__ = f"unary operator {symbol}"
    return method


class Expr:
    """An expression, built by operators and evaluated later.

    Arithmetic, bitwise and comparison operators, attribute access,
    indexing and calls on an ``Expr`` return new expressions.
    :meth:`eval` computes the value; ``str()`` writes the expression in
    Python syntax with only the parentheses that precedence requires.

    An expression has no truth value: ``and``, ``or``, ``not``, ``if`` and
    ``in`` raise :class:`RuntimeError`. Pass each condition to
    :func:`expect` instead.
    """

    __slots__ = ()
    # Makes NumPy operands defer to the reflected operators of Expr.
    __array_ufunc__ = None

    def eval(self):
        """Evaluates the expression.

        Returns:
            The value of the expression.
        """
        raise NotImplementedError

    def __str__(self):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self}>"

    def __bool__(self):
        function = getattr(_local, "function", None)
        where = ""
        if function is not None:
            label = getattr(function, "label", None) or type(function).__name__
            where = f" (checking the types of {label})"
        raise RuntimeError(
            f"The expression `{self}` has no truth value{where}: it cannot be used "
            "with and, or, not, if or in. Pass each condition to "
            "type_check.expect(...) as a separate argument, or call .eval() "
            "to get its value."
        )

    def __iter__(self):
        raise TypeError(f"The expression `{self}` cannot be iterated; index it instead.")

    def __contains__(self, item):
        raise TypeError(
            f"The expression `{self}` does not support the in operator; compare with == instead."
        )

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Member(self, name)

    def __getitem__(self, key):
        return GetItem(self, key)

    def __call__(self, *args, **kwargs):
        return Call(self, args, kwargs)

    __eq__ = _comparison("==")
    __ne__ = _comparison("!=")
    __lt__ = _comparison("<")
    __le__ = _comparison("<=")
    __gt__ = _comparison(">")
    __ge__ = _comparison(">=")
    __hash__ = None

    __add__ = _binary("+")
    __radd__ = _reflected_binary("+")
    __sub__ = _binary("-")
    __rsub__ = _reflected_binary("-")
    __mul__ = _binary("*")
    __rmul__ = _reflected_binary("*")
    __truediv__ = _binary("/")
    __rtruediv__ = _reflected_binary("/")
    __floordiv__ = _binary("//")
    __rfloordiv__ = _reflected_binary("//")
    __mod__ = _binary("%")
    __rmod__ = _reflected_binary("%")
    __pow__ = _binary("**")
    __rpow__ = _reflected_binary("**")
    __lshift__ = _binary("<<")
    __rlshift__ = _reflected_binary("<<")
    __rshift__ = _binary(">>")
    __rrshift__ = _reflected_binary(">>")
    __and__ = _binary("&")
    __rand__ = _reflected_binary("&")
    __or__ = _binary("|")
    __ror__ = _reflected_binary("|")
    __xor__ = _binary("^")
    __rxor__ = _reflected_binary("^")

    __neg__ = _unary("-")
    __pos__ = _unary("+")
    __invert__ = _unary("~")


class Constant(Expr):
    """An expression holding a fixed value.

    Operands that are not expressions are wrapped in a ``Constant``.
    Expressions inside a tuple or list value are evaluated with it.

    Args:
        value: The value.
    """

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value

    @property
    def _priority(self):
        if _format_constant(self._value).startswith("-"):
            return _PRIORITY_UNARY
        return _PRIORITY_ATOM

    def eval(self):
        """Returns the value, with any expressions inside it evaluated."""
        return _evaluate(self._value)

    def __str__(self):
        return _format_constant(self._value)


class Variable(Expr):
    """An expression holding a named value.

    It prints as its name, so that messages show ``x.shape[0]`` rather
    than the array's shape. :func:`argname` renames it.

    Args:
        value: The value.
        name (str): The name it prints as.
    """

    __slots__ = ("_value", "_name")
    _priority = _PRIORITY_ATOM

    def __init__(self, value, name):
        self._value = value
        self._name = name

    def eval(self):
        """Returns the value."""
        return self._value

    def __str__(self):
        return self._name


class Member(Expr):
    """An attribute of an expression's value, such as ``x.shape``.

    Args:
        obj (Expr): The expression whose value has the attribute.
        name (str): The attribute's name.
    """

    __slots__ = ("_obj", "_name")
    _priority = _PRIORITY_ATOM

    def __init__(self, obj, name):
        self._obj = obj
        self._name = name

    def eval(self):
        """Returns the attribute of the evaluated object."""
        return getattr(self._obj.eval(), self._name)

    def __str__(self):
        return f"{_parenthesize(self._obj, _PRIORITY_ATOM)}.{self._name}"


class GetItem(Expr):
    """An item or slice of an expression's value, such as ``x.shape[1:]``.

    Args:
        obj (Expr): The expression whose value is indexed.
        key: The index: an int, a slice, a tuple or an expression, which
            may themselves hold expressions.
    """

    __slots__ = ("_obj", "_key")
    _priority = _PRIORITY_ATOM

    def __init__(self, obj, key):
        self._obj = obj
        self._key = key

    def eval(self):
        """Returns the item of the evaluated object."""
        return self._obj.eval()[_evaluate(self._key)]

    def __str__(self):
        return f"{_parenthesize(self._obj, _PRIORITY_ATOM)}[{_format_key(self._key)}]"


class Call(Expr):
    """A call of an expression's value, such as ``prod(x.shape)``.

    Args:
        obj (Expr): The expression whose value is called.
        args (tuple): Positional arguments, which may be expressions.
        kwargs (dict): Keyword arguments, which may be expressions.
    """

    __slots__ = ("_obj", "_args", "_kwargs")
    _priority = _PRIORITY_ATOM

    def __init__(self, obj, args, kwargs=None):
        self._obj = obj
        self._args = tuple(args)
        self._kwargs = dict(kwargs) if kwargs else {}

    def eval(self):
        """Calls the evaluated object with the evaluated arguments."""
        args = [_evaluate(a) for a in self._args]
        kwargs = {k: _evaluate(v) for k, v in self._kwargs.items()}
        return self._obj.eval()(*args, **kwargs)

    def __str__(self):
        arguments = [_format_constant(a) for a in self._args]
        arguments += [f"{k}={_format_constant(v)}" for k, v in self._kwargs.items()]
        return f"{_parenthesize(self._obj, _PRIORITY_ATOM)}({', '.join(arguments)})"


class UnaryOperator(Expr):
    """A unary operator applied to an expression: ``-x``, ``+x`` or ``~x``.

    Args:
        symbol (str): ``'-'``, ``'+'`` or ``'~'``.
        operand: The operand; a value that is not an :class:`Expr` is
            wrapped in a :class:`Constant`.
    """

    __slots__ = ("_symbol", "_operand", "_func")
    _priority = _PRIORITY_UNARY

    def __init__(self, symbol, operand):
        self._func = _UNARY_OPERATORS[symbol]
        self._symbol = symbol
        self._operand = _to_expr(operand)

    def eval(self):
        """Applies the operator to the evaluated operand."""
        return self._func(self._operand.eval())

    def __str__(self):
        # Written -(-x) rather than the valid but misleading --x.
        return self._symbol + _parenthesize(self._operand, _PRIORITY_POW)


class BinaryOperator(Expr):
    """A binary arithmetic or bitwise operator applied to two expressions.

    Args:
        symbol (str): One of ``| ^ & << >> + - * / // % **``.
        lhs: The left operand; a value that is not an :class:`Expr` is
            wrapped in a :class:`Constant`.
        rhs: The right operand, likewise.
    """

    __slots__ = ("_symbol", "_lhs", "_rhs", "_func", "_priority")

    def __init__(self, symbol, lhs, rhs):
        self._priority, self._func = _BINARY_OPERATORS[symbol]
        self._symbol = symbol
        self._lhs = _to_expr(lhs)
        self._rhs = _to_expr(rhs)

    def eval(self):
        """Applies the operator to the evaluated operands."""
        return self._func(self._lhs.eval(), self._rhs.eval())

    def __str__(self):
        priority = self._priority
        if self._symbol == "**":
            # Right-associative, and binds less tightly than a unary
            # operator on its right: a ** -b ** c is a ** (-(b ** c)).
            left_min, right_min = _PRIORITY_ATOM, _PRIORITY_UNARY
        elif priority == _PRIORITY_COMPARE:
            # Python chains comparisons, so a == b == c is not (a == b) == c.
            left_min = right_min = priority + 1
        else:
            left_min, right_min = priority, priority + 1
        left = _parenthesize(self._lhs, left_min)
        right = _parenthesize(self._rhs, right_min)
        return f"{left} {self._symbol} {right}"


class Testable(BinaryOperator):
    """A comparison of two expressions, which :func:`expect` can test.

    Args:
        symbol (str): One of ``== != < <= > >=``.
        lhs: The left operand; a value that is not an :class:`Expr` is
            wrapped in a :class:`Constant`.
        rhs: The right operand, likewise.
    """

    __slots__ = ("_inverse",)

    def __init__(self, symbol, lhs, rhs):
        self._inverse, self._func = _COMPARISONS[symbol]
        self._priority = _PRIORITY_COMPARE
        self._symbol = symbol
        self._lhs = _to_expr(lhs)
        self._rhs = _to_expr(rhs)

    def expect(self):
        """Evaluates the comparison and raises if it does not hold.

        Raises:
            InvalidType: The comparison is false. ``expect`` is the
                comparison as written; ``actual`` is the two values
                with the negated operator, such as ``3 != 2``.
        """
        left = self._lhs.eval()
        right = self._rhs.eval()
        if not self._func(left, right):
            raise InvalidType(
                str(self),
                f"{_format_value(left)} {self._inverse} {_format_value(right)}",
            )


class TypeInfo:
    """The type of an array as seen by a type check: its shape and dtype.

    Args:
        shape (tuple of int): The shape.
        dtype (numpy.dtype or None): The dtype; ``None`` stands for a
            missing array (see ``accept_none`` of :func:`get_types`).

    Attributes:
        shape (tuple of int): The shape.
        dtype (numpy.dtype or None): The dtype.
        ndim (int): The number of dimensions.
    """

    __slots__ = ("shape", "dtype", "ndim")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)

    @property
    def size(self):
        """int: The number of elements."""
        return math.prod(self.shape)

    def __repr__(self):
        return f"TypeInfo(shape={self.shape}, dtype={self.dtype})"


class TypeInfoTuple(tuple):
    """The types of a function's inputs or outputs, as built by
    :func:`get_types`.

    Attributes:
        name (str): The name of the tuple, such as ``'in_types'``.
    """

    name = "types"
    _light = False

    def size(self):
        """Returns the number of types.

        Returns:
            An :class:`Expr` for the length that prints as
            ``in_types.size()``, or the plain ``int`` for :func:`light_types`.
        """
        if self._light:
            return len(self)
        return Variable(len(self), f"{self.name}.size()")


class _LightTypes(TypeInfoTuple):
    """The inputs themselves standing in for their types, for the light check.

    ``light_types(data)`` returns ``data`` (arrays) as types for a check whose
    conditions evaluate at once. Arrays already have ``shape``, ``dtype``,
    ``ndim`` and ``size``, so the check needs no :class:`TypeInfo`; it builds no
    expression and its failure carries no message. FunctionNode runs this cheap
    check first and repeats a failing one with :func:`get_types` to produce the
    message. A check tells the two apart by its elements: arrays here,
    :class:`Expr` from :func:`get_types`.
    """

    __slots__ = ()
    name = "in_types"
    _light = True


# A class rather than a function that builds one: FunctionNode.apply calls it every time.
light_types = _LightTypes

# Chainer's name for the class of the types a light check receives.
LightTypeInfoTuple = _LightTypes


class _FunctionCheckContext:
    __slots__ = ("_function", "_previous")

    def __init__(self, function):
        self._function = function

    def __enter__(self):
        self._previous = getattr(_local, "function", None)
        _local.function = self._function

    def __exit__(self, *exc_info):
        _local.function = self._previous


def get_function_check_context(function):
    """Returns a context manager that marks ``function`` as being checked.

    While it is active in a thread, errors from misused expressions (see
    :class:`Expr`) name the function.

    Args:
        function: The function whose types are checked; its ``label`` is
            used in messages when it has one.

    Returns:
        A context manager.
    """
    return _FunctionCheckContext(function)


def get_types(data, name, accept_none, shapes=None):
    """Describes the types of a sequence of arrays.

    Args:
        data (tuple): Arrays: NumPy arrays or any objects with ``shape``
            and ``dtype``, such as CuPy arrays.
        name (str): The name of the sequence; element ``i`` is named
            ``'{name}[{i}]'`` in messages.
        accept_none (bool): Whether an element may be ``None``; such an
            element is described as ``TypeInfo((), None)``.
        shapes (sequence of tuples): Shapes to use instead of the arrays'
            own.

    Returns:
        TypeInfoTuple: A :class:`Variable` holding the :class:`TypeInfo`
        of each array.

    Raises:
        TypeError: An element is ``None`` and ``accept_none`` is false, or
            an element has no ``shape`` or ``dtype``.
    """
    types = []
    for i, array in enumerate(data):
        if array is None:
            if not accept_none:
                raise TypeError(f"{name}[{i}] is None")
            info = TypeInfo((), None)
        else:
            try:
                shape = array.shape if shapes is None else shapes[i]
                info = TypeInfo(shape, array.dtype)
            except AttributeError:
                raise TypeError(
                    f"{name}[{i}] must be an array, not {type(array).__name__}"
                ) from None
        types.append(Variable(info, f"{name}[{i}]"))
    result = TypeInfoTuple(types)
    result.name = name
    return result


def make_variable(value, name):
    """Makes a named expression holding ``value``.

    Args:
        value: The value.
        name (str): The name it prints as in messages.

    Returns:
        Variable: The expression.
    """
    return Variable(value, name)


def eval(exp):
    """Evaluates an expression, or returns a plain value unchanged.

    Args:
        exp: An :class:`Expr` or any value.

    Returns:
        The value of ``exp``.
    """
    return exp.eval() if isinstance(exp, Expr) else exp


_prod = Variable(math.prod, "prod")


def prod(xs):
    """Multiplies the elements of ``xs``, such as a shape.

    Args:
        xs: An expression for a sequence of numbers, such as
            ``x.shape[1:]``, or a plain sequence.

    Returns:
        An :class:`Expr` printing as ``prod(x.shape[1:])`` when ``xs`` is
        an expression; otherwise the product itself (``1`` when empty).
    """
    if isinstance(xs, Expr):
        return Call(_prod, (xs,))
    return math.prod(xs)


def expect(*bool_exprs):
    """Checks that every condition holds.

    Args:
        bool_exprs: Conditions, checked in order: comparisons
            (:class:`Testable`), other expressions (tested for truth once
            evaluated) or plain bools.

    Raises:
        InvalidType: A condition does not hold. For a comparison, the
            message names it and the values it compared.
    """
    for condition in bool_exprs:
        if condition is not True:
            break
    else:
        return  # the light check's plain bools, all true
    for position, condition in enumerate(bool_exprs, 1):
        if isinstance(condition, Testable):
            condition.expect()
        elif isinstance(condition, Expr):
            value = condition.eval()
            if not value:
                raise InvalidType(str(condition), _format_value(value))
        elif not condition:
            raise InvalidType(
                f"argument {position} of type_check.expect() is true", _format_value(condition)
            )


def same_types(*arrays):
    """Tells whether the arrays all belong to one array library.

    NumPy arrays and NumPy scalars count as one kind; any other array
    must have the same type as the others. This rejects, for example, a
    mix of NumPy and CuPy arrays.

    Args:
        arrays: Arrays.

    Returns:
        bool: ``True`` if all are NumPy arrays or all have one other type.
    """
    kinds = {
        numpy.ndarray if isinstance(a, (numpy.ndarray, numpy.generic)) else type(a) for a in arrays
    }
    return len(kinds) <= 1


def argname(in_types, names):
    """Renames the types so that messages use the arguments' names.

    After ``argname(in_types, ('x', 'W'))``, a failing condition on
    ``in_types[0].ndim`` prints as ``x.ndim``. Expressions built before
    the call are renamed too.

    Args:
        in_types (sequence): Types from :func:`get_types`.
        names (sequence of str): New names, matched in order; the shorter
            of the two sequences decides how many are renamed.
    """
    if type(in_types) is _LightTypes:
        return
    for in_type, name in zip(in_types, names):
        if isinstance(in_type, Variable):
            in_type._name = name


def expect_broadcast_shapes(*shape_types, allow_none=False):
    """Checks that shapes can be broadcast together by NumPy's rules.

    Args:
        shape_types: Shapes, as expressions (such as ``x.shape``) or
            tuples.
        allow_none (bool): Whether to skip shapes that are ``None``.

    Raises:
        InvalidType: The shapes cannot be broadcast together; the message
            names each shape and gives its value.
    """
    if allow_none:
        shape_types = [s for s in shape_types if s is not None]
    shapes = [tuple(eval(s)) for s in shape_types]
    try:
        numpy.broadcast_shapes(*shapes)
    except ValueError:
        names = ", ".join(_format_constant(s) for s in shape_types)
        values = ", ".join(
            f"{s} = {_format_value(v)}" if isinstance(s, Expr) else _format_value(v)
            for s, v in zip(shape_types, shapes)
        )
        raise InvalidType(
            f"shapes can be broadcast together: {names}", f"cannot broadcast: {values}"
        ) from None
