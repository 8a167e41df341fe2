"""BinaryHierarchicalSoftmax: a softmax over words factorised along a binary tree."""

import heapq

import numpy

from dbr.core import FunctionNode, Link, Parameter, backend, config, initializers, ops, type_check
from dbr.core.ops.get_item import GetItemGrad
from dbr.core.utils import force_array
from dbr.functions.activation.sigmoid import sigmoid


def _compute_dtype(dtype):
    return numpy.dtype(numpy.float32) if dtype == numpy.float16 else dtype


def _sigmoid(a, xp):
    """The logistic sigmoid of an array, written with tanh so that it never overflows."""
    half = a.dtype.type(0.5)
    s = xp.multiply(a, half)
    xp.tanh(s, out=s)
    s *= half
    s += half
    return s


def _parse_tree(tree, dtype):
    """The padded path and code tables of ``tree`` and its number of internal nodes.

    Internal nodes are numbered in preorder (the root is 0, then the left
    subtree, then the right one), as Chainer does, so that the rows of ``W``
    match Chainer's. ``paths[w, k]`` is the ``k``-th internal node on the way
    from the root to word ``w``; ``codes[w, k]`` is +1 when the way goes left
    there, -1 when it goes right and 0 past the end of the way (and for ids
    that are not in the tree).
    """
    leaves = {}
    n_nodes = 0
    stack = [(tree, ())]
    while stack:
        node, way = stack.pop()
        if isinstance(node, tuple):
            if len(node) != 2:
                raise ValueError(
                    "BinaryHierarchicalSoftmax: expected every internal node of tree to be a "
                    f"pair, got a tuple of length {len(node)}"
                )
            node_id = n_nodes
            n_nodes += 1
            stack.append((node[1], way + ((node_id, -1),)))
            stack.append((node[0], way + ((node_id, 1),)))
            continue
        if not isinstance(node, (int, numpy.integer)) or isinstance(node, bool) or node < 0:
            raise ValueError(
                "BinaryHierarchicalSoftmax: expected the leaves of tree to be non-negative int "
                f"word ids, got {node!r}"
            )
        if int(node) in leaves:
            raise ValueError(f"BinaryHierarchicalSoftmax: word id {node} appears twice in tree")
        leaves[int(node)] = way
    n_vocab = max(leaves) + 1
    depth = max(len(way) for way in leaves.values())
    paths = numpy.zeros((n_vocab, depth), numpy.int32)
    codes = numpy.zeros((n_vocab, depth), dtype)
    for word, way in leaves.items():
        if way:
            paths[word, : len(way)], codes[word, : len(way)] = zip(*way)
    return paths, codes, n_nodes


class BinaryHierarchicalSoftmaxFunction(FunctionNode):
    """The hierarchical softmax loss summed over the batch.

    ``sum_b sum_k softplus(-c[b, k] * W[p[b, k]] . x_b)`` with ``p = paths[t]``
    and ``c = codes[t]`` (padding codes are 0 and contribute nothing).

    Args:
        paths (array): ``(V, depth)`` int32 internal node ids per word.
        codes (array): ``(V, depth)`` codes (+1, -1, or 0 for padding).
    """

    def __init__(self, paths, codes):
        self.paths = paths
        self.codes = codes

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "t", "W"))
        x_type, t_type, w_type = in_types
        type_check.expect(
            x_type.dtype.kind == "f",
            x_type.ndim == 2,
            t_type.dtype.kind == "i",
            t_type.ndim == 1,
            x_type.shape[0] == t_type.shape[0],
            w_type.dtype == x_type.dtype,
            w_type.ndim == 2,
            w_type.shape[1] == x_type.shape[1],
        )

    def forward(self, inputs):
        self.retain_inputs((0, 2))
        x, t, W = inputs
        xp = backend.get_array_module(x)
        dtype = _compute_dtype(x.dtype)
        p = self.paths[t]
        c = self.codes[t].astype(dtype, copy=False)
        w = W[p].astype(dtype, copy=False)
        a = xp.matmul(w, x.astype(dtype, copy=False)[:, :, None])[:, :, 0]
        a *= c
        loss = xp.logaddexp(dtype.type(0), -a)
        loss *= c * c
        self._p = p
        self._c = c
        self._a = a
        return (force_array(loss.sum(), x.dtype),)

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        need_x, need_w = 0 in indexes, 2 in indexes
        grad = BinaryHierarchicalSoftmaxGrad(self._p, self._c, self._a, need_x, need_w)
        grads = iter(grad.apply((x, W, grad_outputs[0])))
        return tuple(next(grads) if i in (0, 2) else None for i in indexes)


class BinaryHierarchicalSoftmaxGrad(FunctionNode):
    """The gradients of the hierarchical softmax loss by ``x`` and/or ``W``.

    With ``g[b, k] = -gy * c[b, k] * sigmoid(-a[b, k])``, the derivative of
    the loss by ``W[p[b, k]] . x_b``: ``gx_b = sum_k g[b, k] W[p[b, k]]`` and
    ``gW[n] = sum over (b, k) with p[b, k] = n of g[b, k] x_b``.
    """

    def __init__(self, p, c, a, need_x, need_w):
        self.p = p
        self.c = c
        self.a = a
        self.need_x = need_x
        self.need_w = need_w

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, W, gy = inputs
        xp = backend.get_array_module(x)
        a = self.a
        dtype = a.dtype
        g = _sigmoid(-a, xp)
        g *= self.c
        g *= -gy.astype(dtype, copy=False)
        outputs = []
        if self.need_x:
            w = W[self.p].astype(dtype, copy=False)
            outputs.append(force_array(xp.matmul(g[:, None, :], w)[:, 0, :], x.dtype))
        if self.need_w:
            gW = xp.zeros(W.shape, dtype)
            xp.add.at(gW, self.p, g[:, :, None] * x.astype(dtype, copy=False)[:, None, :])
            outputs.append(force_array(gW, W.dtype))
        return tuple(outputs)

    def backward(self, indexes, grad_outputs):
        x, W, gy = self.get_retained_inputs()
        names = ("x",) * self.need_x + ("W",) * self.need_w
        given = dict(zip(names, grad_outputs))
        ggx, ggW = given.get("x"), given.get("W")
        if ggx is None and ggW is None:
            return (None,) * len(indexes)
        p = self.p
        c = self.c.astype(x.dtype, copy=False)
        n, k = p.shape
        d = x.shape[1]
        w = ops.get_item(W, p)
        x3 = ops.reshape(x, (n, 1, d))
        s = sigmoid(ops.sum(w * x3, axis=2) * -c)
        # Phi = ggx . gx + ggW . gW = sum_bk g[b, k] * m[b, k] with
        # m[b, k] = ggx_b . w_{p[b, k]} + ggW_{p[b, k]} . x_b.
        terms = []
        if ggx is not None:
            ggx3 = ops.reshape(ggx, (n, 1, d))
            terms.append(ops.sum(w * ggx3, axis=2))
        if ggW is not None:
            ggw = ops.get_item(ggW, p)
            terms.append(ops.sum(ggw * x3, axis=2))
        m = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        dg_dgy = s * -c
        g = gy * dg_dgy
        # d g / d(w . x) = gy * c^2 * s * (1 - s); c^2 masks the padding.
        r = ops.reshape(gy * (c * c) * s * (1 - s) * m, (n, k, 1))
        g3 = ops.reshape(g, (n, k, 1))
        ret = []
        for i in indexes:
            if i == 0:
                gx = ops.sum(r * w, axis=1)
                if ggW is not None:
                    gx = gx + ops.sum(g3 * ggw, axis=1)
                ret.append(gx)
            elif i == 1:
                gw = r * x3
                if ggx is not None:
                    gw = gw + g3 * ggx3
                ret.append(GetItemGrad((p,), W.shape, W.dtype).apply((gw,))[0])
            else:
                ret.append(ops.sum(dg_dgy * m))
        return tuple(ret)


class BinaryHierarchicalSoftmax(Link):
    """Hierarchical softmax over a binary tree of words (Morin and Bengio, 2005).

    Each internal node ``n`` of ``tree`` holds a vector ``W[n]``; at that
    node, going left has the probability ``sigmoid(W[n] . x)`` and going
    right ``sigmoid(-W[n] . x)``. The probability of a word is the product
    along the way from the root to its leaf, so the probabilities of all the
    words sum to 1 for every ``x``. The loss is the negative log-probability
    of the true words, summed over the batch.

    The way to every word is tabulated once, at construction, so a call
    costs ``O(B * depth * in_size)``.

    Args:
        in_size (int): the dimension of the input vectors.
        tree: the tree, a nested pair of pairs whose leaves are int word ids
            (for instance from :meth:`create_huffman_tree`); ``((0, 1), 2)``
            has two internal nodes.
        dtype: the dtype of ``W`` (``config.dtype`` when None).

    Attributes:
        W (Parameter): ``(number of internal nodes, in_size)``, initialised
            uniformly in ``[-1, 1)``; rows in preorder of the internal nodes.
        paths (array): ``(V, depth)`` int32, the internal nodes on each
            word's way (``V`` is the largest word id plus one).
        codes (array): ``(V, depth)``, +1 (left) or -1 (right) at each
            step of the way, 0 after its end.

    >>> import numpy as np
    >>> tree = BinaryHierarchicalSoftmax.create_huffman_tree({0: 4, 1: 1, 2: 2})
    >>> tree
    ((1, 2), 0)
    >>> hs = BinaryHierarchicalSoftmax(3, tree)
    >>> hs(np.ones((2, 3), np.float32), np.array([0, 2], np.int32)).shape
    ()
    """

    def __init__(self, in_size, tree, dtype=None):
        super().__init__()
        if not isinstance(in_size, (int, numpy.integer)) or isinstance(in_size, bool):
            raise TypeError(
                "BinaryHierarchicalSoftmax: expected in_size to be an int, "
                f"got {type(in_size).__name__}"
            )
        if in_size < 1:
            raise ValueError(f"BinaryHierarchicalSoftmax: expected in_size >= 1, got {in_size}")
        dtype = numpy.dtype(config.dtype if dtype is None else dtype)
        paths, codes, n_nodes = _parse_tree(tree, dtype)
        # The tables live in a template node, as in Chainer (whose users reach
        # them as ``link._func``); each call applies a fresh node built from it.
        self._func = BinaryHierarchicalSoftmaxFunction(paths, codes)
        with self.init_scope():
            self.W = Parameter(initializers.Uniform(1, dtype), (n_nodes, int(in_size)))

    @staticmethod
    def create_huffman_tree(word_counts):
        """Build the Huffman tree of a vocabulary.

        The two least frequent subtrees are merged repeatedly; ties are
        broken by the order of ``word_counts`` (a merged subtree ranks as
        its earliest word), so the result is deterministic and equal to
        Chainer's.

        Args:
            word_counts (dict): ``{word id: count}``, not empty.

        Returns:
            The tree: a leaf (the only word) or a pair ``(left, right)`` of
            subtrees, the less frequent one on the left.
        """
        if not word_counts:
            raise ValueError("BinaryHierarchicalSoftmax.create_huffman_tree: empty vocabulary")
        heap = [(count, rank, word) for rank, (word, count) in enumerate(word_counts.items())]
        heapq.heapify(heap)
        while len(heap) > 1:
            count1, rank1, left = heapq.heappop(heap)
            count2, rank2, right = heapq.heappop(heap)
            heapq.heappush(heap, (count1 + count2, min(rank1, rank2), (left, right)))
        return heap[0][2]

    @property
    def paths(self):
        """``(V, depth)`` int32: the internal nodes on each word's way."""
        return self._func.paths

    @property
    def codes(self):
        """``(V, depth)``: +1 (left) or -1 (right) at each step of the way, 0 after its end."""
        return self._func.codes

    def to_device(self, device):
        """Move ``W`` and the path and code tables to ``device``; returns this link."""
        super().to_device(device)
        send = self.device.send
        # A new template, not the old one changed: a copy of the link may share it.
        self._func = BinaryHierarchicalSoftmaxFunction(send(self.paths), send(self.codes))
        return self

    def forward(self, x, t):
        """The loss of the words ``t`` given ``x``.

        Args:
            x (Variable or array): ``(B, in_size)`` inputs of ``W``'s dtype.
            t (array): ``(B,)`` int32 word ids in ``[0, V)`` (ids absent from
                the tree contribute 0).

        Returns:
            Variable: the 0-d sum over the batch of ``-log p(t_b | x_b)``,
            differentiable (to any order) by ``x`` and ``W``.
        """
        func = self._func
        return BinaryHierarchicalSoftmaxFunction(func.paths, func.codes).apply((x, t, self.W))[0]

    @property
    def printable_specs(self):
        """``in_size`` and the number of internal nodes, shown by ``str(link)``."""
        n_nodes, in_size = self.W.shape
        yield "in_size", in_size
        yield "n_nodes", n_nodes
