import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.shift import shift

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def shift_ref(x, ksize, dilate):
    """Per output element: the channel's group, its offset, and the source pixel (or 0)."""
    kh, kw = ksize
    dy, dx = dilate
    n, c, h, w = x.shape
    n_groups = kh * kw
    size = c // n_groups
    center = (n_groups - 1) // 2
    y = numpy.zeros_like(x)
    for ch in range(c):
        g = min(ch // size, n_groups - 1)
        if g == center:
            g = n_groups - 1
        elif g == n_groups - 1:
            g = center
        ky = g // kw - kh // 2
        kx = g % kw - kw // 2
        for i in range(h):
            for j in range(w):
                si, sj = i - ky * dy, j - kx * dx
                if 0 <= si < h and 0 <= sj < w:
                    y[:, ch, i, j] = x[:, ch, si, sj]
    return y


@testing.parameterize(
    *testing.product(
        {
            "case": [
                # (x shape, ksize, dilate)
                ((2, 9, 4, 5), 3, 1),
                ((1, 11, 5, 4), 3, 1),  # two channels left over go to the unshifted group
                ((2, 10, 6, 7), (3, 3), (2, 1)),
                ((1, 15, 5, 6), (3, 5), 1),
                ((1, 5, 4, 3), (5, 1), (1, 3)),
                ((1, 9, 3, 3), 3, 4),  # offsets larger than the image
                ((1, 9, 4, 4), 3, -1),
                ((2, 4, 3, 3), 1, 1),  # the identity
            ],
            "dtype": FLOATS,
        }
    )
)
class TestShift(FunctionTestCase):
    def generate_inputs(self):
        x_shape = self.case[0]
        return (numpy.random.uniform(-1, 1, x_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        _, ksize, dilate = self.case
        return (shift(inputs[0], ksize=ksize, dilate=dilate),)

    def forward_expected(self, inputs):
        _, ksize, dilate = self.case
        pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
        return (shift_ref(inputs[0], pair(ksize), pair(dilate)),)


def test_defaults_are_ksize_3_dilate_1():
    x = numpy.random.uniform(-1, 1, (2, 18, 5, 5)).astype(numpy.float32)
    numpy.testing.assert_array_equal(shift(x).array, shift_ref(x, (3, 3), (1, 1)))


def test_gradient_is_the_opposite_shift():
    x = Variable(numpy.random.uniform(-1, 1, (2, 9, 5, 6)))
    gy = numpy.random.uniform(-1, 1, (2, 9, 5, 6))
    y = shift(x, dilate=(1, 2))
    (gx,) = grad([y], [x], [Variable(gy)])
    # <shift(x), gy> == <x, gx> for every x: gx is the transpose of the shift
    expected = numpy.zeros_like(gy)
    for index in numpy.ndindex(*x.shape):
        e = numpy.zeros_like(gy)
        e[index] = 1
        expected[index] = (shift_ref(e, (3, 3), (1, 2)) * gy).sum()
    testing.assert_allclose(gx, expected, rtol=1e-12)


X_9 = numpy.ones((1, 9, 3, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (numpy.ones((1, 16, 3, 3), numpy.float32),),
            {"ksize": ksize},
            ValueError,
            "shift: expected ksize to be odd and positive",
        )
        for ksize in [2, (3, 2), 0, -1, (1, 4)]
    ]
    + [
        ((X_9,), {"dilate": dilate}, ValueError, "shift: expected dilate to be nonzero")
        for dilate in [0, (1, 0), (0, 2)]
    ]
    + [
        (
            (X_9,),
            {name: value},
            TypeError,
            f"shift: expected {name} to be an int or a pair of ints",
        )
        for name, value in [
            ("ksize", 3.0),
            ("ksize", (3, 3, 3)),
            ("dilate", "1"),
            ("dilate", (1, True)),
        ]
    ]
    + [
        ((numpy.ones((1, 9, 3, 3), numpy.int32),), InvalidType, ("Shift", "x.dtype.kind")),
        ((numpy.ones((9, 3, 3), numpy.float32),), InvalidType, ("Shift", "x.ndim")),
        ((numpy.ones((1, 8, 3, 3), numpy.float32),), InvalidType, ("Shift", "x.shape[1]")),
    ],
    function=shift,
)
