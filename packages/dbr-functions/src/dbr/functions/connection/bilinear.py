"""bilinear: the bilinear tensor product of two inputs (a Neural Tensor Network layer)."""

from dbr.core import FunctionNode, ops, type_check
from dbr.functions.connection.linear import matmul_as


class BilinearFunction(FunctionNode):
    """``y_il = e1_ij e2_ik W_jkl (+ e1_ij V1_jl + e2_ik V2_kl + b_l)``; see :func:`bilinear`."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("e1", "e2", "W", "V1", "V2", "b"))
        n_in = type_check.eval(in_types.size())
        if n_in not in (3, 6):
            raise type_check.InvalidType("in_types.size() in (3, 6)", f"in_types.size() == {n_in}")
        e1_type, e2_type, w_type = in_types[:3]
        type_check.expect(
            e1_type.dtype.kind == "f",
            e1_type.ndim >= 2,
            e2_type.dtype == e1_type.dtype,
            e2_type.ndim >= 2,
            e1_type.shape[0] == e2_type.shape[0],
            w_type.dtype == e1_type.dtype,
            w_type.ndim == 3,
            type_check.prod(e1_type.shape[1:]) == w_type.shape[0],
            type_check.prod(e2_type.shape[1:]) == w_type.shape[1],
        )
        if n_in == 6:
            v1_type, v2_type, b_type = in_types[3:]
            type_check.expect(
                v1_type.dtype == e1_type.dtype,
                v1_type.ndim == 2,
                v1_type.shape[0] == w_type.shape[0],
                v1_type.shape[1] == w_type.shape[2],
                v2_type.dtype == e1_type.dtype,
                v2_type.ndim == 2,
                v2_type.shape[0] == w_type.shape[1],
                v2_type.shape[1] == w_type.shape[2],
                b_type.dtype == e1_type.dtype,
                b_type.ndim == 1,
                b_type.shape[0] == w_type.shape[2],
            )

    def forward(self, inputs):
        linear_terms = len(inputs) == 6
        self.retain_inputs((0, 1, 2, 3, 4) if linear_terms else (0, 1, 2))
        e1, e2, W = inputs[:3]
        J, K, L = W.shape
        e1 = e1.reshape(len(e1), J)
        e2 = e2.reshape(len(e2), K)
        outer = e1[:, :, None] * e2[:, None, :]
        y = matmul_as(outer.reshape(len(e1), J * K), W.reshape(J * K, L), e1.dtype)
        if linear_terms:
            V1, V2, b = inputs[3:]
            y += matmul_as(e1, V1, e1.dtype)
            y += matmul_as(e2, V2, e1.dtype)
            y += b
        return (y,)

    def backward(self, indexes, grad_outputs):
        retained = self.get_retained_inputs()
        e1_in, e2_in, W = retained[:3]
        gy = grad_outputs[0]
        J, K, L = W.shape
        n = e1_in.shape[0]
        e1 = ops.reshape(e1_in, (n, J))
        e2 = ops.reshape(e2_in, (n, K))
        ret = []
        if 0 in indexes or 1 in indexes:
            # (gy W^T)_ijk = sum_l gy_il W_jkl, shared by both input gradients.
            gy_w = ops.reshape(ops.matmul(gy, ops.reshape(W, (J * K, L)), transb=True), (n, J, K))
        for i in indexes:
            if i == 0:
                ge1 = ops.reshape(ops.matmul(gy_w, ops.reshape(e2, (n, K, 1))), (n, J))
                if len(retained) == 5:
                    ge1 = ge1 + ops.matmul(gy, retained[3], transb=True)
                ret.append(ops.reshape(ge1, e1_in.shape))
            elif i == 1:
                ge2 = ops.reshape(ops.matmul(ops.reshape(e1, (n, 1, J)), gy_w), (n, K))
                if len(retained) == 5:
                    ge2 = ge2 + ops.matmul(gy, retained[4], transb=True)
                ret.append(ops.reshape(ge2, e2_in.shape))
            elif i == 2:
                outer = ops.reshape(e1, (n, J, 1)) * ops.reshape(e2, (n, 1, K))
                gW = ops.matmul(ops.reshape(outer, (n, J * K)), gy, transa=True)
                ret.append(ops.reshape(gW, (J, K, L)))
            elif i == 3:
                ret.append(ops.matmul(e1, gy, transa=True))
            elif i == 4:
                ret.append(ops.matmul(e2, gy, transa=True))
            else:
                ret.append(ops.sum(gy, axis=0))
        return tuple(ret)


def bilinear(e1, e2, W, V1=None, V2=None, b=None):
    """Bilinear function, the building block of Neural Tensor Networks.

    With :math:`e^1 \\in \\mathbb{R}^{I \\times J}`,
    :math:`e^2 \\in \\mathbb{R}^{I \\times K}`,
    :math:`W \\in \\mathbb{R}^{J \\times K \\times L}` and the optional linear
    parameters :math:`V^1 \\in \\mathbb{R}^{J \\times L}`,
    :math:`V^2 \\in \\mathbb{R}^{K \\times L}`, :math:`b \\in \\mathbb{R}^L`:

    .. math::

        y_{il} = \\sum_{jk} e^1_{ij} e^2_{ik} W_{jkl}
            + \\sum_j e^1_{ij} V^1_{jl} + \\sum_k e^2_{ik} V^2_{kl} + b_l.

    Without ``V1``, ``V2`` and ``b`` the last three terms are left out; they
    are given all together or not at all. Inputs with more than two axes are
    flattened after the first (the batch) axis. See Socher et al., *Reasoning
    With Neural Tensor Networks for Knowledge Base Completion* (NIPS 2013).

    Args:
        e1 (Variable or array): left input of shape :math:`(I, J)` (or
            :math:`(I, ...)` with :math:`J` elements after the batch axis);
            float16, float32 or float64.
        e2 (Variable or array): right input of shape :math:`(I, K)` (or
            :math:`(I, ...)`), of ``e1``'s dtype.
        W (Variable or array): quadratic weights of shape :math:`(J, K, L)`.
        V1 (Variable, array or None): left weights of shape :math:`(J, L)`.
        V2 (Variable, array or None): right weights of shape :math:`(K, L)`.
        b (Variable, array or None): bias of shape :math:`(L,)`.

    Returns:
        Variable: of shape :math:`(I, L)` and ``e1``'s dtype.

    Raises:
        ValueError: some but not all of ``V1``, ``V2`` and ``b`` are given.
        InvalidType: the shapes or dtypes do not fit.

    >>> import numpy as np
    >>> e1 = np.array([[1.0, 2.0]], np.float32)
    >>> e2 = np.array([[3.0, 4.0, 5.0]], np.float32)
    >>> bilinear(e1, e2, np.ones((2, 3, 1), np.float32)).array
    array([[36.]], dtype=float32)
    """
    given = [p is not None for p in (V1, V2, b)]
    if any(given) and not all(given):
        names = ", ".join(n for n, g in zip(("V1", "V2", "b"), given) if g)
        raise ValueError(
            "bilinear: expected V1, V2 and b to be given all together or not at all, "
            f"got only {names}"
        )
    inputs = (e1, e2, W, V1, V2, b) if all(given) else (e1, e2, W)
    return BilinearFunction().apply(inputs)[0]
