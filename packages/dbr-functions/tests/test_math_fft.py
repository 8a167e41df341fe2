import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.fft import FFT, fft, ifft

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "method": ["fft", "ifft"],
            "shape": [(4,), (2, 5), (2, 1, 3)],
            "outputs": ["both", "real", "imag"],
            "dtype": FLOATS,
        }
    )
)
class TestFFT(FunctionTestCase):
    def generate_inputs(self):
        return tuple(numpy.random.uniform(-1, 1, self.shape).astype(self.dtype) for _ in range(2))

    def forward(self, inputs, device):
        y = (fft if self.method == "fft" else ifft)(inputs)
        return self._select(y)

    def forward_expected(self, inputs):
        real, imag = (x.astype(numpy.float64) for x in inputs)
        y = getattr(numpy.fft, self.method)(real + 1j * imag)
        return self._select((y.real.astype(self.dtype), y.imag.astype(self.dtype)))

    def _select(self, pair):
        # Using one part only leaves the other output's gradient None.
        return {"both": tuple(pair), "real": (pair[0],), "imag": (pair[1],)}[self.outputs]


def test_fft_then_ifft_is_the_identity():
    real = Variable(numpy.random.uniform(-1, 1, (3, 8)))
    imag = Variable(numpy.random.uniform(-1, 1, (3, 8)))
    y = fft((real, imag))
    assert type(y[0].creator) is FFT and y[0].creator.label == "FFT"
    back = ifft(y)
    assert back[0].creator.label == "IFFT"
    testing.assert_allclose(back[0], real.array, atol=1e-14, rtol=0)
    testing.assert_allclose(back[1], imag.array, atol=1e-14, rtol=0)


def test_float32_stays_float32():
    y = fft((numpy.ones(4, numpy.float32), numpy.zeros(4, numpy.float32)))
    assert y[0].dtype == numpy.float32 and y[1].dtype == numpy.float32
    testing.assert_allclose(y[0], [4.0, 0.0, 0.0, 0.0], atol=1e-6, rtol=0)


_F32_3 = numpy.ones(3, numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            ((_F32_3, numpy.ones(4, numpy.float32)),),
            InvalidType,
            ("FFT", "imag.shape == real.shape"),
        ),
        (
            ((_F32_3, numpy.ones(3, numpy.float64)),),
            InvalidType,
            ("FFT", "imag.dtype == real.dtype"),
        ),
        (
            ((numpy.ones(3, numpy.int32), numpy.ones(3, numpy.int32)),),
            InvalidType,
            ("FFT", "real.dtype.kind == 'f'"),
        ),
        (
            ((numpy.ones((), numpy.float32), numpy.ones((), numpy.float32)),),
            InvalidType,
            ("FFT", "real.ndim > 0"),
        ),
        (FFT, ("rfft",), {}, ValueError, "FFT: expected method 'fft' or 'ifft'"),
    ],
    function=fft,
)
