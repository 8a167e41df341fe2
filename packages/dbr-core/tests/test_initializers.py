import math
import os
import re
import types

import numpy
import pytest

from dbr.core import backend, initializers
from dbr.core.configuration import using_config

FLOAT_DTYPES = [numpy.float16, numpy.float32, numpy.float64]

# The initializers scaled by the fans of the array they fill.
FAN_BASED_INITIALIZERS = [
    initializers.LeCunNormal,
    initializers.LeCunUniform,
    initializers.GlorotNormal,
    initializers.GlorotUniform,
    initializers.HeNormal,
    initializers.HeUniform,
]

RANDOM_INITIALIZERS = [
    initializers.Normal,
    initializers.Uniform,
    *FAN_BASED_INITIALIZERS,
    initializers.Orthogonal,
]

ALL_INITIALIZERS = [
    lambda dtype=None: initializers.Constant(0.5, dtype),
    initializers.Zero,
    initializers.One,
    initializers.NaN,
    *RANDOM_INITIALIZERS,
]

MATRIX_SHAPES = [(30, 40), (8, 4, 3, 3)]


def _float64(array):
    return numpy.asarray(array, dtype=numpy.float64)


@pytest.mark.parametrize("make", ALL_INITIALIZERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", MATRIX_SHAPES)
def test_fills_in_place_keeping_shape_and_dtype(make, dtype, shape, seeded):
    array = numpy.full(shape, 123.0, dtype=dtype)
    buffer = array
    assert make()(array) is None
    assert array is buffer
    assert array.shape == shape
    assert array.dtype == dtype
    assert not (array == 123.0).any()


@pytest.mark.parametrize("make", ALL_INITIALIZERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_dtype_attribute_is_a_numpy_dtype(make, dtype):
    assert make().dtype is None
    assert make(dtype=dtype).dtype == numpy.dtype(dtype)
    assert isinstance(make(dtype=dtype).dtype, numpy.dtype)


@pytest.mark.parametrize("make", ALL_INITIALIZERS)
def test_dtype_mismatch_names_initializer_and_both_dtypes(make):
    initializer = make(dtype=numpy.float64)
    array = numpy.zeros((4, 4), dtype=numpy.float32)
    with pytest.raises(ValueError) as info:
        initializer(array)
    message = str(info.value)
    assert type(initializer).__name__ in message
    assert "float64" in message
    assert "float32" in message
    assert (array == 0).all()


@pytest.mark.parametrize("make", ALL_INITIALIZERS)
def test_matching_dtype_is_accepted(make, seeded):
    array = numpy.zeros((4, 4), dtype=numpy.float16)
    make(dtype="float16")(array)
    assert array.dtype == numpy.float16


# Orthogonal refuses empty arrays, as Chainer's does (test_orthogonal_rejects_empty_array).
@pytest.mark.parametrize("make", [m for m in ALL_INITIALIZERS if m is not initializers.Orthogonal])
@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 3, 2, 2)])
def test_empty_arrays_are_accepted(make, shape):
    array = numpy.empty(shape, dtype=numpy.float32)
    make()(array)
    assert array.shape == shape


# get_fans


def test_get_fans_of_matrix():
    assert initializers.get_fans((3, 7)) == (7, 3)


def test_get_fans_of_convolution_kernel():
    assert initializers.get_fans((64, 3, 5, 5)) == (3 * 25, 64 * 25)


def test_get_fans_of_3d_kernel_accepts_lists_and_numpy_ints():
    shape = [numpy.int64(4), 2, 3, 3, 3]
    fan_in, fan_out = initializers.get_fans(shape)
    assert (fan_in, fan_out) == (54, 108)
    assert type(fan_in) is int and type(fan_out) is int


@pytest.mark.parametrize("shape", [(), (5,)])
def test_get_fans_needs_two_axes(shape):
    with pytest.raises(ValueError, match="2 or more axes"):
        initializers.get_fans(shape)


@pytest.mark.parametrize("make", FAN_BASED_INITIALIZERS)
def test_fan_based_initializers_reject_vectors(make):
    with pytest.raises(ValueError, match="2 or more axes"):
        make()(numpy.empty(5, dtype=numpy.float32))


# Statistics of large draws. The seed makes them deterministic; the
# tolerances are several standard errors wide so that any seed passes.

# (family, options, shape, std of the family's Normal form). Its Uniform form has the
# same variance, so a bound of sqrt(3) * std, except plain Uniform, whose bound is its scale.
SPREAD_CASES = [
    ("", {}, (400, 500), 0.05),
    ("", {"scale": 2.0}, (400, 500), 2.0),
    ("LeCun", {}, (400, 500), math.sqrt(1 / 500)),
    ("LeCun", {"scale": 3.0}, (64, 32, 3, 3), 3.0 * math.sqrt(1 / 288)),
    ("Glorot", {}, (400, 500), math.sqrt(2 / 900)),
    ("Glorot", {"scale": 0.5}, (64, 32, 3, 3), 0.5 * math.sqrt(2 / (288 + 576))),
    ("He", {}, (400, 500), math.sqrt(2 / 500)),
    ("He", {"fan_option": "fan_out"}, (400, 500), math.sqrt(2 / 400)),
    ("He", {"scale": 2.0}, (64, 32, 3, 3), 2.0 * math.sqrt(2 / 288)),
    ("He", {"fan_option": "fan_out"}, (64, 32, 3, 3), math.sqrt(2 / 576)),
]


@pytest.mark.parametrize(("family", "options", "shape", "std"), SPREAD_CASES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_normal_statistics(family, options, shape, std, dtype, seeded):
    array = numpy.empty(shape, dtype=dtype)
    getattr(initializers, f"{family}Normal")(**options)(array)
    values = _float64(array)
    n = values.size
    assert abs(values.mean()) < 5 * std / math.sqrt(n)
    assert values.std() == pytest.approx(std, rel=5 / math.sqrt(2 * n) + 2e-3)
    within_one_std = (numpy.abs(values) < std).mean()
    assert within_one_std == pytest.approx(0.6827, abs=0.01)


@pytest.mark.parametrize(("family", "options", "shape", "std"), SPREAD_CASES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_uniform_statistics(family, options, shape, std, dtype, seeded):
    bound = std * math.sqrt(3) if family else std
    array = numpy.empty(shape, dtype=dtype)
    getattr(initializers, f"{family}Uniform")(**options)(array)
    values = _float64(array)
    n = values.size
    rounding = 1e-3 * bound if dtype == numpy.float16 else 0.0
    assert numpy.abs(values).max() <= bound + rounding
    assert values.max() > bound * (1 - 20 / n) - rounding
    assert values.min() < -bound * (1 - 20 / n) + rounding
    assert abs(values.mean()) < 5 * bound / math.sqrt(3 * n)
    assert values.std() == pytest.approx(bound / math.sqrt(3), rel=5 / math.sqrt(n) + 2e-3)
    histogram, _ = numpy.histogram(values, bins=10, range=(-bound, bound))
    assert histogram.min() > 0.9 * n / 10


def test_uniform_variance_matches_normal_variance():
    shape = (300, 200)
    pairs = [
        (initializers.LeCunNormal(), initializers.LeCunUniform()),
        (initializers.GlorotNormal(), initializers.GlorotUniform()),
        (initializers.HeNormal(), initializers.HeUniform()),
    ]
    rng = numpy.random.RandomState(1)
    for normal, uniform in pairs:
        normal.rng = uniform.rng = rng
        a = initializers.generate_array(normal, shape, numpy, dtype=numpy.float64)
        b = initializers.generate_array(uniform, shape, numpy, dtype=numpy.float64)
        assert a.std() == pytest.approx(b.std(), rel=0.02)


@pytest.mark.parametrize("make", [initializers.HeNormal, initializers.HeUniform])
def test_he_rejects_unknown_fan_option(make):
    with pytest.raises(ValueError, match="fan_avg"):
        make(fan_option="fan_avg")


# Constant, Zero, One, NaN


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_constant_scalar(dtype):
    array = numpy.empty((2, 3), dtype=dtype)
    initializers.Constant(-1.5)(array)
    numpy.testing.assert_array_equal(array, numpy.full((2, 3), -1.5, dtype=dtype))


def test_constant_on_integer_array():
    array = numpy.empty(4, dtype=numpy.int32)
    initializers.Constant(7)(array)
    numpy.testing.assert_array_equal(array, [7, 7, 7, 7])


def test_constant_array_of_same_shape():
    fill = numpy.arange(6, dtype=numpy.float64).reshape(2, 3)
    array = numpy.empty((2, 3), dtype=numpy.float32)
    initializers.Constant(fill)(array)
    numpy.testing.assert_array_equal(array, fill)
    assert array.dtype == numpy.float32


def test_constant_array_is_broadcast():
    array = numpy.empty((3, 2, 4), dtype=numpy.float32)
    initializers.Constant(numpy.array([1.0, 2.0, 3.0, 4.0]))(array)
    numpy.testing.assert_array_equal(array, numpy.broadcast_to([1, 2, 3, 4], (3, 2, 4)))


def test_constant_array_that_does_not_broadcast():
    array = numpy.zeros((2, 2), dtype=numpy.float32)
    with pytest.raises(ValueError, match=r"shape \(3,\).*\(2, 2\)"):
        initializers.Constant(numpy.ones(3))(array)


def test_constant_with_dtype_converts_its_array():
    initializer = initializers.Constant(numpy.array([1, 2]), dtype=numpy.float16)
    assert initializer.fill_value.dtype == numpy.float16
    array = numpy.empty((2,), dtype=numpy.float16)
    initializer(array)
    numpy.testing.assert_array_equal(array, [1, 2])


def test_constant_does_not_alias_its_fill_array():
    fill = numpy.zeros(3, dtype=numpy.float32)
    array = numpy.empty(3, dtype=numpy.float32)
    initializers.Constant(fill)(array)
    array[0] = 5
    assert fill[0] == 0


@pytest.mark.parametrize(
    ("make", "value"),
    [(initializers.Zero, 0.0), (initializers.One, 1.0)],
)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_zero_and_one(make, value, dtype):
    array = numpy.full((3, 4), 9, dtype=dtype)
    make()(array)
    assert (array == value).all()


def test_nan():
    array = numpy.zeros((3, 4), dtype=numpy.float32)
    initializers.NaN()(array)
    assert numpy.isnan(array).all()


def test_constant_family_are_constants():
    for make in (initializers.Zero, initializers.One, initializers.NaN):
        assert isinstance(make(), initializers.Constant)


# Identity


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("scale", [1.0, -0.5])
def test_identity(dtype, scale):
    array = numpy.full((5, 5), 3, dtype=dtype)
    initializers.Identity(scale=scale)(array)
    numpy.testing.assert_array_equal(array, scale * numpy.eye(5, dtype=dtype))


@pytest.mark.parametrize("shape", [(3, 4), (3,), (2, 2, 2), ()])
def test_identity_needs_square_matrix(shape):
    with pytest.raises(ValueError, match="square 2-D"):
        initializers.Identity()(numpy.empty(shape, dtype=numpy.float32))


# Orthogonal


def _as_matrix(array):
    return _float64(array).reshape(array.shape[0], -1)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(3, 7), (20, 20), (4, 3, 2, 2), (6, 40)])
@pytest.mark.parametrize("mode", ["auto", "projection"])
def test_orthogonal_rows_when_rows_at_most_columns(dtype, shape, mode, seeded):
    if mode == "projection" or shape[0] <= math.prod(shape[1:]):
        array = numpy.empty(shape, dtype=dtype)
        initializers.Orthogonal(scale=1.5, mode=mode)(array)
        w = _as_matrix(array)
        tolerance = 1e-2 if dtype == numpy.float16 else 1e-5
        numpy.testing.assert_allclose(w @ w.T, 2.25 * numpy.eye(shape[0]), atol=tolerance)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(7, 3), (20, 20), (12, 2, 2, 1), (50,)])
@pytest.mark.parametrize("mode", ["auto", "embedding"])
def test_orthogonal_columns_when_rows_at_least_columns(dtype, shape, mode, seeded):
    array = numpy.empty(shape, dtype=dtype)
    initializers.Orthogonal(scale=0.5, mode=mode)(array)
    w = _as_matrix(array)
    tolerance = 1e-2 if dtype == numpy.float16 else 1e-5
    numpy.testing.assert_allclose(w.T @ w, 0.25 * numpy.eye(w.shape[1]), atol=tolerance)


def test_orthogonal_basis_is_orthogonal_both_ways(seeded):
    array = numpy.empty((16, 4, 2, 2), dtype=numpy.float64)
    initializers.Orthogonal(mode="basis")(array)
    w = _as_matrix(array)
    numpy.testing.assert_allclose(w @ w.T, 1.21 * numpy.eye(16), atol=1e-12)
    numpy.testing.assert_allclose(w.T @ w, 1.21 * numpy.eye(16), atol=1e-12)


def test_orthogonal_default_scale():
    assert initializers.Orthogonal().scale == 1.1
    assert initializers.Orthogonal().mode == "auto"


def test_orthogonal_is_haar_distributed():
    # Entries of a Haar-random n x n orthogonal matrix have mean 0 and variance 1/n.
    rng = numpy.random.RandomState(3)
    n, trials = 4, 4000
    draws = numpy.empty((trials, n, n))
    for k in range(trials):
        initializers.Orthogonal(scale=1.0, rng=rng)(draws[k])
    numpy.testing.assert_allclose(draws.mean(axis=0), 0, atol=0.05)
    numpy.testing.assert_allclose(draws.var(axis=0), 1 / n, rtol=0.1)
    determinants = numpy.linalg.det(draws)
    assert 0.45 < (determinants > 0).mean() < 0.55


@pytest.mark.parametrize(
    ("mode", "shape"),
    [("projection", (5, 3)), ("basis", (3, 5)), ("basis", (5, 3)), ("embedding", (3, 5))],
)
def test_orthogonal_mode_rejects_shape(mode, shape):
    with pytest.raises(ValueError, match=rf"mode='{mode}'.*{shape[0]} rows and {shape[1]} col"):
        initializers.Orthogonal(mode=mode)(numpy.empty(shape, dtype=numpy.float32))


def test_orthogonal_rejects_unknown_mode():
    with pytest.raises(ValueError, match="'square'"):
        initializers.Orthogonal(mode="square")


def test_orthogonal_scalar_array_is_plus_or_minus_scale():
    # A 0-dim array is a 1 x 1 orthogonal matrix: +-scale, each sign about half the time.
    rng = numpy.random.RandomState(5)
    draws = []
    for _ in range(400):
        array = numpy.empty((), dtype=numpy.float32)
        initializers.Orthogonal(scale=2.5, rng=rng)(array)
        draws.append(float(array))
    assert set(draws) == {2.5, -2.5}
    assert 150 < draws.count(2.5) < 250


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0)])
def test_orthogonal_rejects_empty_array(shape):
    with pytest.raises(ValueError, match=rf"Orthogonal.*empty.*{re.escape(str(shape))}"):
        initializers.Orthogonal()(numpy.empty(shape, dtype=numpy.float32))


# Seeding


@pytest.mark.parametrize("make", RANDOM_INITIALIZERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_numpy_random_seed_reproduces_draws(make, dtype, seeded):
    def draw():
        array = numpy.empty((6, 5), dtype=dtype)
        make()(array)
        return array

    numpy.random.seed(42)
    first, second = draw(), draw()
    numpy.random.seed(42)
    again = draw()
    numpy.testing.assert_array_equal(first, again)
    assert not numpy.array_equal(first, second)


@pytest.mark.parametrize("make", RANDOM_INITIALIZERS)
@pytest.mark.parametrize(
    "make_rng", [numpy.random.RandomState, numpy.random.default_rng], ids=["legacy", "generator"]
)
def test_rng_argument_is_used_instead_of_global_state(make, make_rng, seeded):
    before = numpy.random.get_state()[1].copy()
    arrays = []
    for _ in range(2):
        array = numpy.empty((6, 5), dtype=numpy.float32)
        make(rng=make_rng(7))(array)
        arrays.append(array)
    numpy.testing.assert_array_equal(arrays[0], arrays[1])
    numpy.testing.assert_array_equal(numpy.random.get_state()[1], before)


# Custom initializers


class _Twos(initializers.Initializer):
    """Writes 2 everywhere."""

    def _fill(self, array):
        array[...] = 2


def test_custom_initializer_gets_dtype_check():
    array = numpy.empty(3, dtype=numpy.float32)
    _Twos()(array)
    numpy.testing.assert_array_equal(array, [2, 2, 2])
    with pytest.raises(ValueError, match="_Twos.*float64.*float32"):
        _Twos(dtype=numpy.float64)(array)


def test_base_initializer_is_abstract():
    with pytest.raises(NotImplementedError):
        initializers.Initializer()(numpy.empty(3))


def test_repr_shows_parameters():
    assert repr(initializers.HeNormal(2.0, dtype="float16")) == (
        "HeNormal(dtype=dtype('float16'), scale=2.0, fan_option='fan_in')"
    )


# generate_array


def test_generate_array_uses_config_dtype_by_default():
    array = initializers.generate_array(initializers.One(), (2, 3), numpy)
    assert array.dtype == numpy.float32
    assert array.shape == (2, 3)
    assert (array == 1).all()
    with using_config("dtype", numpy.float16):
        array = initializers.generate_array(initializers.One(), (2, 3), numpy)
    assert array.dtype == numpy.float16


def test_generate_array_dtype_argument_beats_config():
    with using_config("dtype", numpy.float16):
        array = initializers.generate_array(initializers.Zero(), (4,), numpy, dtype="float64")
    assert array.dtype == numpy.float64


def test_generate_array_initializer_dtype_beats_config():
    with using_config("dtype", numpy.float16):
        array = initializers.generate_array(initializers.Zero(numpy.float64), (4,), numpy)
    assert array.dtype == numpy.float64


def test_generate_array_agreeing_dtypes():
    initializer = initializers.Normal(dtype=numpy.float64)
    array = initializers.generate_array(initializer, (4,), numpy, dtype=numpy.dtype("float64"))
    assert array.dtype == numpy.float64


def test_generate_array_conflicting_dtypes():
    initializer = initializers.Normal(dtype=numpy.float64)
    with pytest.raises(ValueError, match=r"float16.*Normal.*float64"):
        initializers.generate_array(initializer, (4,), numpy, dtype=numpy.float16)


def test_generate_array_accepts_plain_callables():
    def fill_with_index(array):
        array[...] = numpy.arange(array.size).reshape(array.shape)

    array = initializers.generate_array(fill_with_index, (2, 2), numpy, dtype=numpy.int64)
    numpy.testing.assert_array_equal(array, [[0, 1], [2, 3]])
    assert initializers.generate_array(fill_with_index, (2,), numpy).dtype == numpy.float32


def test_generate_array_accepts_int_shape():
    assert initializers.generate_array(initializers.One(), 3, numpy).shape == (3,)


@pytest.mark.parametrize("device", ["@numpy", -1, backend.CpuDevice()])
def test_generate_array_on_cpu_device(device):
    array = initializers.generate_array(initializers.Identity(), (3, 3), numpy, device=device)
    assert isinstance(array, numpy.ndarray)
    numpy.testing.assert_array_equal(array, numpy.eye(3))


def test_generate_array_rejects_device_of_another_module():
    class OtherDevice(backend.Device):
        xp = types.ModuleType("otherxp")
        name = "@other"

    with pytest.raises(ValueError, match=r"@other uses otherxp.*numpy"):
        initializers.generate_array(initializers.One(), (2,), numpy, device=OtherDevice())


# get_initializer


def test_get_initializer_default_is_lecun_normal():
    initializer = initializers.get_initializer(None)
    assert type(initializer) is initializers.LeCunNormal
    assert initializer.scale == 1.0
    assert initializer.dtype is None


@pytest.mark.parametrize("value", [0, 2.5, True, numpy.float32(1.5)])
def test_get_initializer_scalar_gives_constant(value):
    initializer = initializers.get_initializer(value)
    assert type(initializer) is initializers.Constant
    array = numpy.empty(3, dtype=numpy.float32)
    initializer(array)
    assert (array == numpy.float32(value)).all()


def test_get_initializer_array_gives_constant():
    fill = numpy.arange(4.0).reshape(2, 2)
    initializer = initializers.get_initializer(fill)
    assert type(initializer) is initializers.Constant
    array = initializers.generate_array(initializer, (2, 2), numpy)
    numpy.testing.assert_array_equal(array, fill)


def test_get_initializer_passes_callables_through():
    initializer = initializers.HeNormal()
    assert initializers.get_initializer(initializer) is initializer
    assert initializers.get_initializer(print) is print


@pytest.mark.parametrize("value", ["zeros", [1.0, 2.0], object()])
def test_get_initializer_rejects_other_values(value):
    with pytest.raises(TypeError, match=type(value).__name__):
        initializers.get_initializer(value)


def test_private_name_kept_for_chainer_code():
    assert initializers._get_initializer is initializers.get_initializer


def test_public_names():
    for name in initializers.__all__:
        assert getattr(initializers, name).__doc__


# GPU: the same code on CuPy arrays (skipped without CuPy and dbr.gpu).


@pytest.fixture
def cupy():
    module = pytest.importorskip("cupy")
    pytest.importorskip("dbr.gpu")
    try:
        if module.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA device")
    except module.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device")
    return module


@pytest.mark.gpu
@pytest.mark.parametrize("make", ALL_INITIALIZERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gpu_fills_in_place(cupy, make, dtype):
    array = cupy.full((8, 4, 3, 3), 123.0, dtype=dtype)
    make()(array)
    assert isinstance(array, cupy.ndarray)
    assert array.dtype == dtype
    assert not bool((array == 123.0).any())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gpu_statistics(cupy, dtype):
    cupy.random.seed(0)
    normal = initializers.generate_array(initializers.HeNormal(), (400, 500), cupy, dtype=dtype)
    uniform = initializers.generate_array(initializers.LeCunUniform(), (400, 500), cupy, dtype)
    normal, uniform = (cupy.asnumpy(a).astype(numpy.float64) for a in (normal, uniform))
    assert normal.std() == pytest.approx(math.sqrt(2 / 500), rel=0.02)
    bound = math.sqrt(3 / 500)
    assert numpy.abs(uniform).max() <= bound * 1.001
    assert uniform.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)


@pytest.mark.gpu
def test_gpu_seed_reproduces_draws(cupy):
    cupy.random.seed(5)
    first = initializers.generate_array(initializers.Normal(), (50,), cupy)
    cupy.random.seed(5)
    again = initializers.generate_array(initializers.Normal(), (50,), cupy)
    cupy.testing.assert_array_equal(first, again)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(3, 7), (7, 3), (6, 6), (4, 3, 2, 2)])
def test_gpu_orthogonal(cupy, shape):
    array = initializers.generate_array(initializers.Orthogonal(scale=2.0), shape, cupy)
    w = cupy.asnumpy(array).astype(numpy.float64).reshape(shape[0], -1)
    product = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    numpy.testing.assert_allclose(product, 4 * numpy.eye(min(w.shape)), atol=1e-4)


@pytest.mark.gpu
def test_gpu_array_takes_numpy_rng_and_numpy_fill(cupy):
    array = cupy.empty((3, 4), dtype=cupy.float32)
    initializers.Normal(rng=numpy.random.RandomState(0))(array)
    expected = numpy.random.RandomState(0).normal(0.0, 0.05, size=(3, 4)).astype(numpy.float32)
    numpy.testing.assert_array_equal(cupy.asnumpy(array), expected)
    initializers.Constant(numpy.arange(4.0))(array)
    numpy.testing.assert_array_equal(cupy.asnumpy(array), numpy.tile(numpy.arange(4.0), (3, 1)))


@pytest.mark.gpu
def test_gpu_generate_array_on_device(cupy):
    array = initializers.generate_array(initializers.One(), (2, 2), cupy, device="@cupy:0")
    assert isinstance(array, cupy.ndarray)
    assert array.device.id == 0
    with pytest.raises(ValueError, match="numpy"):
        initializers.generate_array(initializers.One(), (2,), numpy, device="@cupy:0")


# Up/downsampling filters

SAMPLING_FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "sampling_filters.npz")


def test_upsampling_filter_values_written_out():
    # k = 4: f = 2, center = 1.5, taps 1 - |j - 1.5| / 2.
    taps = numpy.array([0.25, 0.75, 0.75, 0.25])
    array = numpy.full((2, 2, 4, 4), 9.0, numpy.float32)
    initializers.UpsamplingDeconvFilter()(array)
    expected = numpy.zeros((2, 2, 4, 4))
    expected[0, 0] = expected[1, 1] = numpy.outer(taps, taps)
    numpy.testing.assert_array_equal(array, expected.astype(numpy.float32))


def test_downsampling_filter_values_written_out():
    # k = 3: f = 2, center = 1, taps (0.5, 1, 0.5); their outer product sums to 4.
    taps = numpy.array([0.5, 1.0, 0.5])
    array = numpy.full((3, 1, 3, 3), 9.0, numpy.float64)
    initializers.DownsamplingConvFilter()(array)
    expected = numpy.zeros((3, 1, 3, 3))
    expected[:, 0] = numpy.outer(taps, taps) / 4
    numpy.testing.assert_array_equal(array, expected)


def test_upsampling_filter_in_three_dimensions():
    # k = 3 in 3-d: the product of (0.5, 1, 0.5) along each axis, unnormalized.
    taps = numpy.array([0.5, 1.0, 0.5])
    array = numpy.empty((1, 1, 3, 3, 3), numpy.float64)
    initializers.UpsamplingDeconvFilter()(array)
    expected = taps[:, None, None] * taps[None, :, None] * taps[None, None, :]
    numpy.testing.assert_array_equal(array[0, 0], expected)


@pytest.mark.parametrize("name", ["UpsamplingDeconvFilter", "DownsamplingConvFilter"])
@pytest.mark.parametrize(
    "shape", [(1, 1, 1), (3, 3, 4, 4), (2, 1, 5, 5), (2, 2, 3, 3, 3), (1, 1, 6)]
)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_sampling_filters_match_chainer(name, shape, dtype):
    # tests/fixtures/make_sampling_filters.py wrote what Chainer 7.8.1 writes.
    key = f"{name}_{'x'.join(map(str, shape))}_{numpy.dtype(dtype).name}"
    with numpy.load(SAMPLING_FIXTURE) as f:
        expected = f[key]
    array = numpy.full(shape, 7.0, dtype)
    getattr(initializers, name)()(array)
    assert array.dtype == expected.dtype
    numpy.testing.assert_array_equal(array, expected)


@pytest.mark.parametrize(
    "make", [initializers.UpsamplingDeconvFilter, initializers.DownsamplingConvFilter]
)
def test_sampling_filters_options_and_bad_shapes(make):
    name = make.__name__
    assert make().interpolation == "linear" and make().dtype is None
    assert make(dtype=numpy.float16).dtype == numpy.float16
    with pytest.raises(ValueError, match=f"{name}: interpolation must be one of .*'cubic'"):
        make(interpolation="cubic")
    with pytest.raises(ValueError, match=f"{name} was built for dtype float64"):
        make(dtype=numpy.float64)(numpy.zeros((1, 1, 2, 2), numpy.float32))
    for shape, words in [
        ((2, 3, 2, 2), "second axis to be the first's length or 1, got shape (2, 3, 2, 2)"),
        ((2, 2, 2, 3), "equal spatial sizes, got shape (2, 2, 2, 3)"),
        ((2, 2), "at least one spatial axis, got shape (2, 2)"),
    ]:
        array = numpy.full(shape, 5.0, numpy.float32)
        with pytest.raises(ValueError) as info:
            make()(array)
        assert name in str(info.value) and words in str(info.value)
        assert (array == 5.0).all()


@pytest.mark.gpu
def test_gpu_sampling_filters(cupy):
    array = cupy.full((2, 2, 4, 4), 3.0, dtype=cupy.float32)
    initializers.UpsamplingDeconvFilter()(array)
    expected = numpy.full((2, 2, 4, 4), 3.0, numpy.float32)
    initializers.UpsamplingDeconvFilter()(expected)
    numpy.testing.assert_array_equal(cupy.asnumpy(array), expected)
    array = cupy.full((3, 1, 3, 3), 3.0, dtype=cupy.float64)
    initializers.DownsamplingConvFilter()(array)
    expected = numpy.full((3, 1, 3, 3), 3.0)
    initializers.DownsamplingConvFilter()(expected)
    numpy.testing.assert_array_equal(cupy.asnumpy(array), expected)
