import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math import sparse_matmul as sparse_module
from dbr.functions.math.sparse_matmul import CooMatMul, CooMatrix, sparse_matmul, to_coo

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def dense_of(data, row, col, shape):
    """The dense matrices of COO entries, in float64 (repeated indexes add up)."""
    data, row, col = (numpy.atleast_2d(a) for a in (data, row, col))
    out = numpy.zeros((len(data),) + shape)
    for b in range(len(data)):
        used = (row[b] >= 0) & (col[b] >= 0)
        numpy.add.at(out[b], (row[b][used], col[b][used]), data[b][used].astype(numpy.float64))
    return out


def random_sparse(shape, dtype):
    x = numpy.random.uniform(-1, 1, shape)
    x[numpy.random.uniform(size=shape) < 0.5] = 0
    return x.astype(dtype)


class SparseMatMulCase(FunctionTestCase):
    """``sparse_matmul`` of a random COO operand and a dense one (parameterized below)."""

    m, k, n = 3, 4, 2
    sparse_dtype = dense_dtype = None

    def generate_inputs(self):
        lead = () if self.batch is None else (self.batch,)
        # op(a) is (m, k) and op(b) is (k, n); the sparse operand is given untransposed.
        a_shape = lead + ((self.k, self.m) if self.transa else (self.m, self.k))
        b_shape = lead + ((self.n, self.k) if self.transb else (self.k, self.n))
        sparse_shape, dense_shape = (a_shape, b_shape) if self.sparse_left else (b_shape, a_shape)
        sparse_dtype = self.sparse_dtype or self.dtype
        coo = to_coo(random_sparse(sparse_shape, sparse_dtype), ldnz=self.m * self.k + 1)
        self.row, self.col, self.shape = coo.row, coo.col, coo.shape
        dense = numpy.random.uniform(-1, 1, dense_shape).astype(self.dense_dtype or self.dtype)
        return coo.data.array, dense

    def forward(self, inputs, device):
        data, dense = inputs
        sp = CooMatrix(data, device.send(self.row), device.send(self.col), self.shape)
        a, b = (sp, dense) if self.sparse_left else (dense, sp)
        return (sparse_matmul(a, b, transa=self.transa, transb=self.transb),)

    def forward_expected(self, inputs):
        data, dense = inputs
        s = dense_of(data, self.row, self.col, self.shape)
        if self.batch is None:
            s = s[0]
        a, b = (s, dense.astype(numpy.float64))
        if not self.sparse_left:
            a, b = b, a
        if self.transa:
            a = a.swapaxes(-1, -2)
        if self.transb:
            b = b.swapaxes(-1, -2)
        return ((a @ b).astype(numpy.result_type(*inputs)),)


@testing.parameterize(
    *testing.product(
        {
            "sparse_left": [True, False],
            "batch": [None, 2],
            "transa": [False, True],
            "transb": [False, True],
            "dtype": FLOATS,
        }
    )
)
class TestSparseMatMul(SparseMatMulCase):
    """Both operands of one dtype, either way round, batched or not, transposed or not."""


@testing.parameterize(
    *testing.product(
        {
            "sparse_left": [True, False],
            "batch": [None, 2],
            "transa": [False, True],
            "transb": [True],
            "sparse_dtype": FLOATS,
            "dense_dtype": FLOATS,
        }
    )
)
class TestSparseMatMulMixedDtypes(SparseMatMulCase):
    """Operands of two dtypes: the product in NumPy's promotion, each gradient in its input's."""

    def before_test(self, test_name):
        families.loosen_for_float16(self, self.sparse_dtype, self.dense_dtype)


@testing.parameterize(
    *testing.product(
        {
            "transa": [False, True],
            "transb": [False, True],
            "transc": [False, True],
            "dtype": [numpy.float32],
        }
    )
)
class TestCooMatMulNode(FunctionTestCase):
    """CooMatMul built directly as Chainer's tests build it: order hint and transc."""

    m, k, n = 3, 4, 2

    def generate_inputs(self):
        sparse_shape = (self.k, self.m) if self.transa else (self.m, self.k)
        dense_shape = (self.n, self.k) if self.transb else (self.k, self.n)
        coo = to_coo(random_sparse(sparse_shape, self.dtype))
        self.coo = coo
        return coo.data.array, numpy.random.uniform(-1, 1, dense_shape).astype(numpy.float64)

    def forward(self, inputs, device):
        coo = self.coo
        node = CooMatMul(
            device.send(coo.row), device.send(coo.col), coo.shape, coo.order,
            transa=self.transa, transb=self.transb, transc=self.transc,
        )  # fmt: skip
        return (node.apply(inputs)[0],)

    def forward_expected(self, inputs):
        data, dense = inputs
        s = dense_of(data, self.coo.row, self.coo.col, self.coo.shape)[0]
        a = s.T if self.transa else s
        b = dense.T if self.transb else dense
        y = a @ b
        return (y.T if self.transc else y,)


def test_coo_matmul_dtype_argument():
    coo = to_coo(numpy.array([[1.0, 0.0], [0.0, 2.0]], numpy.float32))
    node = CooMatMul(coo.row, coo.col, coo.shape, dtype=numpy.float16)
    (y,) = node.apply((coo.data, numpy.ones((2, 3))))
    assert y.dtype == numpy.float16
    testing.assert_allclose(y, [[1.0] * 3, [2.0] * 3], atol=0, rtol=0)


def test_all_zero_matrix():
    coo = to_coo(numpy.zeros((2, 3), numpy.float32), requires_grad=True)
    assert coo.data.shape == (0,) and coo.order == "C"
    y = sparse_matmul(coo, numpy.ones((3, 4), numpy.float32))
    testing.assert_allclose(y, numpy.zeros((2, 4)), atol=0, rtol=0)
    (g,) = grad([y], [coo.data], [Variable(numpy.ones((2, 4), numpy.float32))])
    assert g.shape == (0,) and g.dtype == numpy.float32


class TestSparseMatMulWithoutScipy(TestSparseMatMul):
    """The same checks on the NumPy fallback used when SciPy is not installed."""

    @pytest.fixture(autouse=True)
    def _without_scipy(self, monkeypatch):
        monkeypatch.setattr(sparse_module, "_scipy_sparse", False)


@pytest.fixture(params=["scipy", "numpy"])
def cpu_path(request, monkeypatch):
    """Run a test both with SciPy's sparse product and with the NumPy fallback."""
    if request.param == "numpy":
        monkeypatch.setattr(sparse_module, "_scipy_sparse", False)
    elif not sparse_module._sparse_module():
        pytest.skip("SciPy is not installed")
    return request.param


def test_repeated_indexes_add_up(cpu_path):
    data = Variable(numpy.array([1.0, 2.0, 3.0, 0.0]))
    row = numpy.array([0, 0, 1, -1], numpy.int32)
    col = numpy.array([1, 1, 0, -1], numpy.int32)
    sp = CooMatrix(data, row, col, (2, 2))
    testing.assert_allclose(sp.to_dense(), [[0.0, 3.0], [3.0, 0.0]], atol=0, rtol=0)
    b = Variable(numpy.array([[1.0, 2.0], [3.0, 4.0]]))
    y = sparse_matmul(sp, b)
    assert type(y.creator) is CooMatMul
    testing.assert_allclose(y, [[9.0, 12.0], [3.0, 6.0]], atol=0, rtol=0)
    g_data, g_b = grad([y], [data, b])
    testing.assert_allclose(g_data, [7.0, 7.0, 3.0, 0.0], atol=0, rtol=0)
    testing.assert_allclose(g_b, [[3.0, 3.0], [3.0, 3.0]], atol=0, rtol=0)


def test_batched_product_agrees_with_dense(cpu_path):
    a = random_sparse((3, 5, 4), numpy.float32)
    a[1] = 0
    b = numpy.random.uniform(-1, 1, (3, 4, 6)).astype(numpy.float32)
    y = sparse_matmul(to_coo(a), b)
    testing.assert_allclose(y, a @ b, atol=1e-6, rtol=1e-5)


def test_to_coo_layout():
    x = numpy.array([[[0.0, 2.0], [3.0, 0.0]], [[0.0, 0.0], [0.0, 5.0]]], numpy.float32)
    coo = to_coo(x, requires_grad=True)
    numpy.testing.assert_array_equal(coo.data.array, [[2.0, 3.0], [5.0, 0.0]])
    numpy.testing.assert_array_equal(coo.row, [[0, 1], [1, -1]])
    numpy.testing.assert_array_equal(coo.col, [[1, 0], [1, -1]])
    assert coo.row.dtype == numpy.int32 and coo.shape == (2, 2) and coo.order == "C"
    assert coo.data.requires_grad
    testing.assert_allclose(coo.to_dense(), x, atol=0, rtol=0)
    single = to_coo(x[0], ldnz=4)
    assert single.data.shape == (4,) and not single.data.requires_grad
    numpy.testing.assert_array_equal(single.row, [0, 1, -1, -1])


def test_order_detection():
    data = numpy.ones(3, numpy.float32)
    c = numpy.array([0, 0, 1], numpy.int32), numpy.array([0, 2, 1], numpy.int32)
    assert CooMatrix(data, *c, (3, 3)).order == "C"
    assert CooMatrix(data, c[1], c[0], (3, 3)).order == "F"
    other = numpy.array([2, 0, 1], numpy.int32), numpy.array([0, 2, 0], numpy.int32)
    assert CooMatrix(data, *other, (3, 3)).order == "other"
    assert CooMatrix(data, *other, (3, 3), order="C").order == "C"


_COO_ARGS = {
    "data": numpy.ones(2, numpy.float32),
    "row": numpy.array([0, 1], numpy.int32),
    "col": numpy.array([1, 0], numpy.int32),
    "shape": (2, 2),
}
_SP = to_coo(numpy.eye(3, dtype=numpy.float32))
_DENSE = numpy.ones((3, 2), numpy.float32)

test_bad_input = bad_input_test(
    [
        (CooMatrix, (), {**_COO_ARGS, **kwargs}, error, message)
        for kwargs, error, message in [
            (
                {"data": numpy.ones((1, 1, 1))},
                ValueError,
                "CooMatrix: expected data with 1 or 2 axes",
            ),
            (
                {"row": numpy.zeros(3, numpy.int32)},
                ValueError,
                "expected data, row and col of one",
            ),
            ({"row": numpy.zeros(2)}, TypeError, "CooMatrix: expected integer row and col"),
            ({"shape": (2, 0)}, ValueError, "CooMatrix: expected shape to be two positive ints"),
            ({"shape": (1, 2)}, ValueError, "CooMatrix: expected row < 1 and col < 2"),
            ({"order": "X"}, ValueError, "CooMatrix: expected order"),
        ]
    ]
    + [
        (
            to_coo,
            (numpy.ones(3, numpy.float32),),
            {},
            ValueError,
            "to_coo: expected x with 2 or 3 axes, got shape (3,)",
        ),
        ((_DENSE, _DENSE), ValueError, "sparse_matmul: expected one CooMatrix and one"),
        ((_SP, _SP), ValueError, "got CooMatrix and CooMatrix"),
        (
            (_SP, numpy.ones((4, 2), numpy.float32)),
            InvalidType,
            ("CooMatMul", "dn.shape[-2] == 3"),
        ),
        ((_SP, _DENSE.astype(numpy.int32)), InvalidType, "dn.dtype.kind == 'f'"),
        (
            (to_coo(numpy.eye(3, dtype=numpy.int32)), _DENSE),
            InvalidType,
            "sp.dtype.kind == 'f'",
        ),
        (
            (_SP, numpy.ones((2, 4), numpy.float32)),
            {"transb": True},
            InvalidType,
            "dn.shape[-1] == 3",
        ),
        ((_SP, numpy.ones((1, 3, 2), numpy.float32)), InvalidType, "dn.ndim == sp.ndim"),
        (
            (to_coo(numpy.ones((2, 3, 3), numpy.float32)), numpy.ones((4, 3, 2), numpy.float32)),
            InvalidType,
            "dn.shape[0] == 2",
        ),
    ],
    function=sparse_matmul,
)
