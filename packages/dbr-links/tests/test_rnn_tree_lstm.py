import numpy
import pytest
from rnn_reference import linear, sigmoid

from dbr.core import InvalidType
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, make_link, tolerances
from dbr.core.testing.link_checks import check_link_backward, check_link_lifecycle
from dbr.links.rnn.tree_lstm import ChildSumTreeLSTM, NaryTreeLSTM

IN, OUT = 3, 2


def _cell(a, i, o, fs, cs):
    c = numpy.tanh(a) * sigmoid(i) + sum(sigmoid(f) * c for f, c in zip(fs, cs))
    return c, sigmoid(o) * numpy.tanh(c)


def _child_sum(link, cs, hs, x):
    """NumPy reference of the Child-Sum TreeLSTM in float64."""
    u = linear(link.W_x, x)
    a, i, o, f = (u[:, k * OUT : (k + 1) * OUT] for k in range(4))
    if hs:
        aio = linear(link.W_h_aio, sum(h.astype(numpy.float64) for h in hs))
        a, i, o = a + aio[:, :OUT], i + aio[:, OUT : 2 * OUT], o + aio[:, 2 * OUT :]
    fs = [f + linear(link.W_h_f, h) for h in hs]
    return _cell(a, i, o, fs, [c.astype(numpy.float64) for c in cs])


def _nary(link, cs, hs, x):
    """NumPy reference of the N-ary TreeLSTM in float64."""
    u = linear(link.W_x, x)
    for k, h in enumerate(hs, start=1):
        u = u + linear(getattr(link, f"W_h{k}"), h)
    blocks = [u[:, k * OUT : (k + 1) * OUT] for k in range(3 + len(hs))]
    return _cell(
        blocks[0], blocks[1], blocks[2], blocks[3:], [c.astype(numpy.float64) for c in cs]
    )


def _make(cls, dtype, *args):
    link = make_link(cls, dtype, *args)
    link.W_x.b.array[...] = numpy.random.uniform(-1, 1, link.W_x.b.shape)
    return link


def _states(dtype, n, batch=4):
    def r(size):
        return numpy.random.uniform(-1, 1, (batch, size)).astype(dtype)

    return [r(OUT) for _ in range(n)], [r(OUT) for _ in range(n)], r(IN)


def test_construction():
    link = ChildSumTreeLSTM(IN, OUT)
    assert (link.in_size, link.state_size) == (IN, OUT)
    assert link.W_x.W.shape == (4 * OUT, IN) and link.W_x.b.shape == (4 * OUT,)
    assert link.W_h_aio.W.shape == (3 * OUT, OUT) and link.W_h_aio.b is None
    assert link.W_h_f.W.shape == (OUT, OUT) and link.W_h_f.b is None
    link = NaryTreeLSTM(in_size=IN, out_size=OUT, n_ary=3)
    assert link.n_ary == 3 and link.W_x.W.shape == (6 * OUT, IN)
    for k in (1, 2, 3):
        assert getattr(link, f"W_h{k}").W.shape == (6 * OUT, OUT)
    assert NaryTreeLSTM(IN, OUT).n_ary == 2
    with pytest.raises(ValueError, match=r"NaryTreeLSTM: n_ary must be an int >= 1, got 0"):
        NaryTreeLSTM(IN, OUT, 0)


def _check_against_reference(link, reference, dtype, n):
    """Run ``link`` on ``n`` children's states and compare with ``reference(link, cs, hs, x)``."""
    cs, hs, x = _states(dtype, n)
    c, h = link(*cs, *hs, x)
    c_ref, h_ref = reference(link, cs, hs, x)
    assert c.dtype == dtype and h.shape == (4, OUT)
    assert_allclose(c.array, c_ref, **tolerances(dtype))
    assert_allclose(h.array, h_ref, **tolerances(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [0, 1, 3])
def test_child_sum_against_reference(dtype, n):
    _check_against_reference(_make(ChildSumTreeLSTM, dtype, IN, OUT), _child_sum, dtype, n)


def test_child_sum_ignores_the_order_of_children():
    link = _make(ChildSumTreeLSTM, numpy.float64, IN, OUT)
    (c1, c2), (h1, h2), x = _states(numpy.float64, 2)
    c, h = link(c1, c2, h1, h2, x)
    c_swapped, h_swapped = link(c2, c1, h2, h1, x)
    assert_allclose(c.array, c_swapped.array, atol=1e-12, rtol=1e-12)
    assert_allclose(h.array, h_swapped.array, atol=1e-12, rtol=1e-12)


def test_child_sum_none_means_zeros():
    link = _make(ChildSumTreeLSTM, numpy.float32, IN, OUT)
    (c1, c2), (h1, h2), x = _states(numpy.float32, 2)
    zeros = numpy.zeros_like(c1)
    tol = tolerances("float32")
    c, h = link(c1, None, None, h2, None)
    c_ref, h_ref = _child_sum(link, [c1, zeros], [zeros, h2], numpy.zeros((4, IN), "f"))
    assert_allclose(c.array, c_ref, **tol)
    assert_allclose(h.array, h_ref, **tol)
    with pytest.raises(ValueError, match=r"ChildSumTreeLSTM: all inputs \(cs, hs, x\) are None"):
        link(None, None, None)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n_ary", [1, 2])
def test_nary_against_reference(dtype, n_ary):
    _check_against_reference(_make(NaryTreeLSTM, dtype, IN, OUT, n_ary), _nary, dtype, n_ary)


def test_nary_none_means_zeros():
    link = _make(NaryTreeLSTM, numpy.float32, IN, OUT, 2)
    (c1, c2), (h1, h2), x = _states(numpy.float32, 2)
    zeros = numpy.zeros_like(c1)
    c, h = link(None, c2, h1, None, x)
    c_ref, h_ref = _nary(link, [zeros, c2], [h1, zeros], x)
    assert_allclose(h.array, h_ref, **tolerances("float32"))
    with pytest.raises(TypeError, match=r"NaryTreeLSTM.forward: expected 5 arguments .* got 3"):
        link(c1, h1, x)


def test_lazy_in_size():
    for link, args in ((ChildSumTreeLSTM(None, OUT), 2), (NaryTreeLSTM(None, OUT), 2)):
        assert link.W_x.W.array is None
        cs, hs, _ = _states(numpy.float32, args)
        link(*cs, *hs, numpy.zeros((4, 5), numpy.float32))
        assert link.W_x.W.shape[1] == 5
        c, h = link(*cs, *hs, None)
        assert h.shape == (4, OUT)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward(dtype):
    gc, gh = (numpy.random.uniform(-1, 1, (2, OUT)).astype(dtype) for _ in range(2))
    for link in (_make(ChildSumTreeLSTM, dtype, IN, OUT), _make(NaryTreeLSTM, dtype, IN, OUT)):
        cs, hs, x = _states(dtype, 2, batch=2)
        check_link_backward(link, (*cs, *hs, x), (gc, gh), link.params(), dtype)


def test_param_names_round_trip_copy():
    link = _make(ChildSumTreeLSTM, numpy.float32, IN, OUT)
    names = ["/W_h_aio/W", "/W_h_f/W", "/W_x/W", "/W_x/b"]
    check_link_lifecycle(link, ChildSumTreeLSTM(None, OUT), names)
    link = _make(NaryTreeLSTM, numpy.float32, IN, OUT, 3)
    names = ["/W_h1/W", "/W_h2/W", "/W_h3/W", "/W_x/W", "/W_x/b"]
    check_link_lifecycle(link, NaryTreeLSTM(None, OUT, 3), names)


def test_wrong_input():
    link = NaryTreeLSTM(IN, OUT)
    cs, hs, x = _states(numpy.float32, 2)
    with pytest.raises(InvalidType, match=r"LinearFunction(?s:.*)4 != 3"):
        link(*cs, *hs, numpy.zeros((4, 4), numpy.float32))
    with pytest.raises(
        InvalidType, match=r"TreeLSTM(?s:.*)dtype(?s:.*)float(32|64) != float(32|64)"
    ):
        link(*[c.astype(numpy.float64) for c in cs], None, None, x)
