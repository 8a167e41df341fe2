import numpy
import pytest

from dbr.core import InvalidType, Variable, gradient_check, initializers
from dbr.core.testing import assert_allclose, bad_input_test, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.loss.hierarchical_softmax import BinaryHierarchicalSoftmax

COUNTS = {0: 8, 1: 1, 2: 2, 3: 3, 4: 5}
# Worked out by hand: merge 1+2 (3, ranked as word 1), then it ties with word 3
# (count 3) and goes left for its lower rank, then 4 with that (6), then 0.
TREE = (0, (4, ((1, 2), 3)))
# The internal nodes in preorder: 0 the root, 1 = (4, ...), 2 = ((1, 2), 3),
# 3 = (1, 2); each word's way as (node, +1 for left / -1 for right).
WAYS = {
    0: [(0, 1)],
    4: [(0, -1), (1, 1)],
    1: [(0, -1), (1, -1), (2, 1), (3, 1)],
    2: [(0, -1), (1, -1), (2, 1), (3, -1)],
    3: [(0, -1), (1, -1), (2, -1)],
}


def _reference(x, t, W):
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    loss = 0.0
    for xb, tb in zip(x, t):
        for node, code in WAYS[int(tb)]:
            loss += numpy.logaddexp(0.0, -code * W[node] @ xb)
    return loss


def _link(dtype=numpy.float32, in_size=3):
    link = BinaryHierarchicalSoftmax(in_size, TREE, dtype=dtype)
    rng = numpy.random.default_rng(0)
    link.W.array[...] = rng.uniform(-1, 1, link.W.shape)
    return link


def test_create_huffman_tree():
    assert BinaryHierarchicalSoftmax.create_huffman_tree(COUNTS) == TREE
    assert BinaryHierarchicalSoftmax.create_huffman_tree({7: 3}) == 7
    assert BinaryHierarchicalSoftmax.create_huffman_tree({"a": 1, "b": 1}) == ("a", "b")
    with pytest.raises(ValueError, match="create_huffman_tree: empty vocabulary"):
        BinaryHierarchicalSoftmax.create_huffman_tree({})


def test_construction_and_params():
    link = BinaryHierarchicalSoftmax(3, TREE)
    assert param_names(link) == ["/W"]
    assert link.W.shape == (4, 3)
    assert link.W.dtype == numpy.float32
    assert (numpy.abs(link.W.array) <= 1).all()
    link = BinaryHierarchicalSoftmax(in_size=2, tree=((0, 1), 2), dtype=numpy.float64)
    assert link.W.shape == (2, 2)
    assert link.W.dtype == numpy.float64
    assert persistent_names(link) == []


def test_tables():
    link = BinaryHierarchicalSoftmax(2, ((0, 1), 3))
    numpy.testing.assert_array_equal(link.paths, [[0, 1], [0, 1], [0, 0], [0, 0]])
    numpy.testing.assert_array_equal(link.codes, [[1, 1], [1, -1], [0, 0], [-1, 0]])


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_forward_against_reference(dtype):
    link = _link(dtype)
    rng = numpy.random.default_rng(1)
    x = rng.standard_normal((6, 3)).astype(dtype)
    t = numpy.array([0, 1, 2, 3, 4, 2], numpy.int32)
    y = link(x, t)
    assert y.shape == ()
    assert y.dtype == dtype
    assert_allclose(y.array, _reference(x, t, link.W.array), **tolerances(dtype))


def test_probabilities_sum_to_one():
    link = _link(numpy.float64)
    x = numpy.array([[0.3, -1.2, 0.7]])
    total = sum(numpy.exp(-float(link(x, numpy.array([w], numpy.int32)).array)) for w in COUNTS)
    assert total == pytest.approx(1.0, abs=1e-12)


def test_words_absent_from_tree_cost_nothing():
    link = BinaryHierarchicalSoftmax(2, (0, 3))
    y = link(numpy.ones((2, 2), numpy.float32), numpy.array([1, 2], numpy.int32))
    assert float(y.array) == 0.0


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_backward(dtype):
    link = _link(dtype)
    rng = numpy.random.default_rng(2)
    x = rng.standard_normal((4, 3)).astype(dtype)
    t = numpy.array([1, 4, 1, 0], numpy.int32)
    tol = tolerances(dtype, "backward")
    if dtype == numpy.float16:
        tol = {"atol": 5e-2, "rtol": 5e-2}
    gradient_check.check_backward(
        lambda x: link(x, t),
        x,
        numpy.array(1.5, dtype),
        params=(link.W,),
        dtype=numpy.float64,
        **tol,
    )


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_double_backward(dtype):
    link = _link(dtype)
    rng = numpy.random.default_rng(3)
    x = rng.standard_normal((4, 3)).astype(dtype)
    t = numpy.array([2, 3, 2, 0], numpy.int32)
    gradient_check.check_double_backward(
        lambda x: link(x, t),
        x,
        numpy.array(0.7, dtype),
        rng.standard_normal(x.shape).astype(dtype),
        params=(link.W,),
        params_grad_grad=(rng.standard_normal(link.W.shape).astype(dtype),),
        dtype=numpy.float64,
        **tolerances(dtype, "double_backward"),
    )


def test_gradient_values():
    link = _link(numpy.float64)
    x = Variable(numpy.array([[0.5, -0.2, 0.1]]))
    link.cleargrads()
    link(x, numpy.array([3], numpy.int32)).backward()
    w, xb = link.W.array, x.array[0]
    gx = numpy.zeros(3)
    gW = numpy.zeros_like(w)
    for node, code in WAYS[3]:
        g = -code / (1 + numpy.exp(code * w[node] @ xb))
        gx += g * w[node]
        gW[node] += g * xb
    assert_allclose(x.grad[0], gx, **tolerances(numpy.float64))
    assert_allclose(link.W.grad, gW, **tolerances(numpy.float64))


def test_training_lowers_loss():
    link = _link(numpy.float64)
    x = numpy.random.default_rng(4).standard_normal((5, 3))
    t = numpy.array([0, 1, 2, 3, 4], numpy.int32)
    first = float(link(x, t).array)
    for _ in range(20):
        link.cleargrads()
        link(x, t).backward()
        link.W.array -= 0.1 * link.W.grad
    assert float(link(x, t).array) < first


def test_round_trip_and_copy():
    link = _link()
    fresh = BinaryHierarchicalSoftmax(3, TREE)
    check_round_trip(link, fresh)
    check_copy_modes(link)
    copied = link.copy("copy")
    x = numpy.ones((1, 3), numpy.float32)
    t = numpy.array([2], numpy.int32)
    assert_allclose(copied(x, t).array, link(x, t).array)


def test_to_device_cpu():
    link = _link()
    assert link.to_device("@numpy") is link
    assert isinstance(link.paths, numpy.ndarray)
    link(numpy.ones((1, 3), numpy.float32), numpy.array([0], numpy.int32))


def test_tables_live_in_the_template_node_the_calls_use():
    link = _link()
    assert link.codes is link._func.codes and link.paths is link._func.paths
    x = numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32)
    t = numpy.array([1, 3], numpy.int32)
    expected = _reference(x, t, link.W.array)
    link._func.codes = link._func.codes.astype(numpy.float64)
    assert link.codes.dtype == numpy.float64
    assert_allclose(link(x, t).array, expected, atol=1e-5, rtol=1e-5)
    link._func.codes = -link._func.codes
    flipped = link(x, t).array
    assert not numpy.allclose(flipped, expected)


def test_to_device_of_a_shared_copy_leaves_the_original_template():
    link = _link()
    shared = link.copy("share")
    original = link._func
    shared.to_device("@numpy")
    assert link._func is original and shared._func is not original
    numpy.testing.assert_array_equal(shared.codes, link.codes)


_T = numpy.array([0, 1], numpy.int32)
_BAD_TREES = [
    ((0, 1, 2), "every internal node of tree to be a pair, got a tuple of length 3"),
    ((0, "a"), "leaves of tree to be non-negative int word ids, got 'a'"),
    ((0, -1), "non-negative int word ids, got -1"),
    ((0, (1, 0)), "word id 0 appears twice"),
]

test_bad_input = bad_input_test(
    [
        (
            (numpy.ones((2, 3), numpy.float64), _T),
            InvalidType,
            ("BinaryHierarchicalSoftmaxFunction", "W.dtype == x"),
        ),
        ((numpy.ones((2, 4), numpy.float32), _T), InvalidType, "W.shape[1] == x.shape[1]"),
        (
            (numpy.ones((2, 3), numpy.float32), _T.astype(numpy.float32)),
            InvalidType,
            "t.dtype.kind == 'i'",
        ),
        ((numpy.ones((3, 3), numpy.float32), _T), InvalidType, "x.shape[0] == t.shape[0]"),
    ]
    + [
        (
            BinaryHierarchicalSoftmax,
            (3, tree),
            {},
            ValueError,
            ("BinaryHierarchicalSoftmax: ", match),
        )
        for tree, match in _BAD_TREES
    ]
    + [
        (
            BinaryHierarchicalSoftmax,
            (in_size, TREE),
            {},
            error,
            "BinaryHierarchicalSoftmax: expected in_size",
        )
        for in_size, error in [(0, ValueError), (-2, ValueError), (2.0, TypeError)]
    ],
    function=_link(),
)


def test_initializer_is_uniform_in_unit_interval():
    link = BinaryHierarchicalSoftmax(500, TREE)
    assert isinstance(link.W.initializer, initializers.Uniform)
    assert link.W.array.min() >= -1 and link.W.array.max() <= 1
    assert link.W.array.min() < -0.9 and link.W.array.max() > 0.9
