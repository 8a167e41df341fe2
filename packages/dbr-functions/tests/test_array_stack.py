import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.stack import dstack, hstack, stack, vstack

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shape,axis": [
                ((3, 4), 0),
                ((3, 4), 1),
                ((3, 4), 2),
                ((3, 4), -1),
                ((3, 4), -3),
                ((), 0),
                ((2, 0), 1),
            ],
            "n": [1, 3],
            "dtype": FLOATS,
        }
    )
)
class TestStack(FunctionTestCase):
    def generate_inputs(self):
        return tuple([uniform(self.shape, self.dtype) for _ in range(self.n)])

    def forward(self, inputs, device):
        return (stack(inputs, axis=self.axis),)

    def forward_expected(self, inputs):
        axis = self.axis % (len(self.shape) + 1)
        shape = self.shape[:axis] + (self.n,) + self.shape[axis:]
        y = numpy.empty(shape, self.dtype)
        for i, x in enumerate(inputs):
            y[(slice(None),) * axis + (i,)] = x
        return (y,)


def _promote(x, kind):
    """Reference promotion of each input as numpy's atleast_*d used by h/v/dstack."""
    if kind == "hstack":
        return x.reshape(1) if x.ndim == 0 else x
    if kind == "vstack":
        return x.reshape(1, -1) if x.ndim < 2 else x
    if x.ndim == 0:
        return x.reshape(1, 1, 1)
    if x.ndim == 1:
        return x.reshape(1, -1, 1)
    if x.ndim == 2:
        return x[:, :, None]
    return x


def _join_axis(kind, ndim):
    if kind == "hstack":
        return 0 if ndim <= 1 else 1
    return 0 if kind == "vstack" else 2


@testing.parameterize(
    *testing.product(
        {
            "kind,shapes": [
                ("hstack", [(), ()]),
                ("hstack", [(3,), (1,), (2,)]),
                ("hstack", [(2, 3), (2, 1)]),
                ("hstack", [(2, 3, 4), (2, 2, 4)]),
                ("hstack", [(4,)]),
                ("vstack", [(), (), ()]),
                ("vstack", [(3,), (3,)]),
                ("vstack", [(2, 3), (1, 3)]),
                ("vstack", [(2, 3, 4), (3, 3, 4)]),
                ("vstack", [(3,)]),
                ("dstack", [(), ()]),
                ("dstack", [(3,), (3,)]),
                ("dstack", [(2, 3), (2, 3)]),
                ("dstack", [(2, 3, 4), (2, 3, 1)]),
                ("dstack", [(2, 3, 4, 5), (2, 3, 2, 5)]),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestHVDstack(FunctionTestCase):
    def generate_inputs(self):
        return tuple([uniform(s, self.dtype) for s in self.shapes])

    def forward(self, inputs, device):
        f = {"hstack": hstack, "vstack": vstack, "dstack": dstack}[self.kind]
        return (f(inputs),)

    def forward_expected(self, inputs):
        parts = [_promote(x, self.kind) for x in inputs]
        axis = _join_axis(self.kind, inputs[0].ndim)
        shape = list(parts[0].shape)
        shape[axis] = sum(p.shape[axis] for p in parts)
        y = numpy.empty(shape, self.dtype)
        start = 0
        for p in parts:
            index = [slice(None)] * y.ndim
            index[axis] = slice(start, start + p.shape[axis])
            y[tuple(index)] = p
            start += p.shape[axis]
        return (y,)


def test_stack_gradient_separates():
    xs = [Variable(numpy.zeros(2, numpy.float32)) for _ in range(3)]
    y = stack(xs, axis=1)
    y.grad = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    y.backward()
    for i, x in enumerate(xs):
        numpy.testing.assert_array_equal(x.grad, [i, 3 + i])


def test_hstack_of_integers():
    y = hstack((numpy.array([1, 2], numpy.int32), numpy.array([3], numpy.int32)))
    numpy.testing.assert_array_equal(y.array, [1, 2, 3])
    assert y.dtype == numpy.int32


_F32 = numpy.float32

test_bad_input = bad_input_test(
    [
        (
            ((numpy.zeros(3, _F32), numpy.zeros(4, _F32)),),
            InvalidType,
            ("Stack", "xs[1].shape == xs[0].shape"),
        ),
        (
            ((numpy.zeros(3, _F32), numpy.zeros(3, numpy.float64)),),
            InvalidType,
            "xs[1].dtype == xs[0].dtype",
        ),
        (((numpy.zeros(3, _F32),),), {"axis": 2}, InvalidType, "xs[0].ndim >= 2"),
        (((numpy.zeros(3, _F32),),), {"axis": -3}, InvalidType, "-xs[0].ndim - 1 <= -3"),
        (((),), InvalidType, "in_types.size() > 0"),
        (
            ((numpy.zeros(3, _F32),),),
            {"axis": "0"},
            TypeError,
            "stack: expected axis to be an int",
        ),
        (
            hstack,
            ((numpy.zeros((2, 3), _F32), numpy.zeros((3, 3), _F32)),),
            {},
            InvalidType,
            ("Hstack", "xs[1].shape[0] == xs[0].shape[0]"),
        ),
        (
            hstack,
            ((numpy.zeros(3, _F32), numpy.zeros((1, 3), _F32)),),
            {},
            InvalidType,
            "xs[1].ndim == xs[0].ndim",
        ),
        (
            vstack,
            ((numpy.zeros(3, _F32), numpy.zeros(4, _F32)),),
            {},
            InvalidType,
            ("Vstack", "xs[1].shape[0] == xs[0].shape[0]"),
        ),
        (
            vstack,
            ((numpy.zeros((2, 3), _F32), numpy.zeros((2, 4), _F32)),),
            {},
            InvalidType,
            "xs[1].shape[1] == xs[0].shape[1]",
        ),
        (
            dstack,
            ((numpy.zeros((2, 3), _F32), numpy.zeros((2, 4), _F32)),),
            {},
            InvalidType,
            ("Dstack", "xs[1].shape[1] == xs[0].shape[1]"),
        ),
        (
            dstack,
            ((numpy.zeros(3, _F32), numpy.zeros(3, numpy.float64)),),
            {},
            InvalidType,
            "xs[1].dtype == xs[0].dtype",
        ),
    ],
    function=stack,
)
