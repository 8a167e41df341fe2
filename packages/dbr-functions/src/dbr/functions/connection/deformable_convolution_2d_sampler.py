"""deformable_convolution_2d_sampler: a 2-d convolution whose taps are moved by learned offsets."""

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.functions.array.concat import concat
from dbr.functions.connection._im2col import as_tuple
from dbr.functions.connection.embed_id import add_rows_at
from dbr.functions.connection.linear import matmul_as

_float32 = numpy.dtype(numpy.float32)
_WHO = "deformable_convolution_2d_sampler"

# The four neighbours of a sampling point, as (row step, column step).
_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


class _Geometry:
    """Where each tap of each window samples ``x``, for given offsets.

    For tap ``t = p k_W + q`` of the window at output ``(i, j)`` the point is
    ``(i s_Y - p_H + p + offset_y, j s_X - p_W + q + offset_x)``. Its integer
    part selects four neighbouring pixels and its fractional part ``(b, a)``
    weighs them; pixels outside the image read as zero. Arrays have the
    layout ``(n, h_O, w_O, T)`` with ``T = k_H k_W`` taps.

    Attributes:
        a, b: the fractional column and row parts, in the compute dtype.
        floor_x, floor_y: ``floor(point) - base``, the integer parts counted
            from the window's own tap position, in the compute dtype.
        rows: for each corner, flat indexes into ``x`` laid out as
            ``(n h w, c)`` rows.
        inside: for each corner, whether that pixel lies in the image.
    """

    def __init__(self, offset, in_size, ksize, stride, pad):
        xp = backend.get_array_module(offset)
        n, _, out_h, out_w = offset.shape
        h, w = in_size
        kh, kw = ksize
        n_taps = kh * kw
        dtype = numpy.promote_types(offset.dtype, _float32)
        off = offset.astype(dtype, copy=False)
        dx = off[:, :n_taps].transpose(0, 2, 3, 1)
        dy = off[:, n_taps:].transpose(0, 2, 3, 1)
        base_x = (xp.arange(out_w) * stride[1] - pad[1])[:, None] + xp.tile(xp.arange(kw), kh)
        base_y = (xp.arange(out_h) * stride[0] - pad[0])[:, None] + xp.repeat(xp.arange(kh), kw)
        base_x = base_x.astype(dtype)[None, None]
        base_y = base_y.astype(dtype)[None, :, None]
        # Points beyond the first ring of zeros read only zeros; clipping them
        # there keeps their integer parts small and changes no value.
        px = xp.clip(dx + base_x, -2, w + 1)
        py = xp.clip(dy + base_y, -2, h + 1)
        fx = xp.floor(px)
        fy = xp.floor(py)
        self.a = px - fx
        self.b = py - fy
        self.floor_x = fx - base_x
        self.floor_y = fy - base_y
        ix = fx.astype(numpy.intp)
        iy = fy.astype(numpy.intp)
        first = (xp.arange(n) * (h * w)).reshape(n, 1, 1, 1)
        self.rows = []
        self.inside = []
        for step_y, step_x in _CORNERS:
            cy = iy + step_y
            cx = ix + step_x
            self.inside.append((cy >= 0) & (cy < h) & (cx >= 0) & (cx < w))
            self.rows.append(first + xp.clip(cy, 0, h - 1) * w + xp.clip(cx, 0, w - 1))


def _pixel_rows(x, dtype):
    """``x`` as ``(n h w, c)`` rows of ``dtype``: one row per pixel."""
    n, c, h, w = x.shape
    return x.transpose(0, 2, 3, 1).astype(dtype).reshape(n * h * w, c)


def _sample(x, geometry):
    """The sampled windows ``(n, h_O, w_O, T, c)`` in the compute dtype."""
    a, b = geometry.a, geometry.b
    rows = _pixel_rows(x, a.dtype)
    col = None
    for (step_y, step_x), index, inside in zip(_CORNERS, geometry.rows, geometry.inside):
        weight = (b if step_y else 1 - b) * (a if step_x else 1 - a)
        weight *= inside
        term = rows[index]
        term *= weight[..., None]
        if col is None:
            col = term
        else:
            col += term
    return col


class _ScatterRows(FunctionNode):
    """Rows of ``v`` added into a ``(n_rows, c)`` array at ``rows``: the transpose of a gather."""

    def __init__(self, rows, n_rows):
        self.rows = rows
        self.n_rows = n_rows

    def forward(self, inputs):
        v = inputs[0]
        xp = backend.get_array_module(v)
        c = v.shape[-1]
        out = xp.zeros((self.n_rows, c), v.dtype)
        add_rows_at(out, self.rows.ravel(), v.reshape(-1, c))
        return (out,)

    def backward(self, indexes, grad_outputs):
        return (ops.get_item(grad_outputs[0], self.rows),)


def _sample_grads(geometry, x, offset, gcol, targets):
    """Gradients of the sampled windows with respect to ``x`` and ``offset``, as Variables.

    Written with differentiable functions, so that they can be differentiated again.
    ``targets`` holds 0 for ``x`` and/or 1 for ``offset``.
    """
    n, c, h, w = x.shape
    dtype = x.dtype
    n_taps = gcol.shape[3]
    floor_x = geometry.floor_x.astype(dtype)
    floor_y = geometry.floor_y.astype(dtype)
    dx = ops.transpose(ops.get_item(offset, (slice(None), slice(0, n_taps))), (0, 2, 3, 1))
    dy = ops.transpose(ops.get_item(offset, (slice(None), slice(n_taps, None))), (0, 2, 3, 1))
    a = dx - floor_x
    b = dy - floor_y
    weights_x = (1 - a, a)
    weights_y = (1 - b, b)
    if 1 in targets:
        pixel_rows = ops.reshape(ops.transpose(x, (0, 2, 3, 1)), (n * h * w, c))
    gx_rows = ga = gb = None
    for (step_y, step_x), index, inside in zip(_CORNERS, geometry.rows, geometry.inside):
        inside = inside.astype(dtype)
        wy = weights_y[step_y]
        wx = weights_x[step_x]
        if 0 in targets:
            weight = ops.reshape(wy * wx * inside, wy.shape + (1,))
            term = _ScatterRows(index, n * h * w).apply((gcol * weight,))[0]
            gx_rows = term if gx_rows is None else gx_rows + term
        if 1 in targets:
            # d(col)/da and d(col)/db: the weights' slopes times the corner's pixel.
            product = ops.sum(gcol * ops.get_item(pixel_rows, index), axis=4) * inside
            term_a = wy * product
            term_b = wx * product
            if ga is None:
                ga, gb = -term_a, -term_b
            else:
                ga = ga + term_a if step_x else ga - term_a
                gb = gb + term_b if step_y else gb - term_b
    ret = []
    if 0 in targets:
        ret.append(ops.transpose(ops.reshape(gx_rows, (n, h, w, c)), (0, 3, 1, 2)))
    if 1 in targets:
        # Offsets hold the column parts first, then the row parts.
        ret.append(ops.transpose(concat((ga, gb), axis=3), (0, 3, 1, 2)))
    return ret


class _DeformableSample(FunctionNode):
    """The windows of ``x`` sampled at the offset taps, ``(n, h_O, w_O, T, c)``."""

    def __init__(self, ksize, stride, pad):
        self.ksize = ksize
        self.stride = stride
        self.pad = pad

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, offset = inputs
        geometry = _Geometry(offset, x.shape[2:], self.ksize, self.stride, self.pad)
        return (_sample(x, geometry).astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x, offset = self.get_retained_inputs()
        geometry = _Geometry(offset.array, x.shape[2:], self.ksize, self.stride, self.pad)
        return tuple(_sample_grads(geometry, x, offset, grad_outputs[0], indexes))


class DeformableConvolution2DSampler(FunctionNode):
    """Deformable 2-d convolution of ``x`` with filters ``W`` at offset taps; see the wrapper."""

    def __init__(self, stride, pad):
        self.stride = stride
        self.pad = pad

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "offset", "W", "b"))
        n_in = in_types.size()
        type_check.expect(n_in >= 3, n_in <= 4)
        x_type, offset_type, w_type = in_types[:3]
        sy, sx = self.stride
        ph, pw = self.pad
        type_check.expect(
            x_type.dtype.kind == "f",
            x_type.ndim == 4,
            x_type.shape[2] > 0,
            x_type.shape[3] > 0,
            w_type.dtype == x_type.dtype,
            w_type.ndim == 4,
            w_type.shape[1] == x_type.shape[1],
            x_type.shape[2] + 2 * ph >= w_type.shape[2],
            x_type.shape[3] + 2 * pw >= w_type.shape[3],
            offset_type.dtype == x_type.dtype,
            offset_type.ndim == 4,
            offset_type.shape[0] == x_type.shape[0],
            offset_type.shape[1] == 2 * w_type.shape[2] * w_type.shape[3],
            offset_type.shape[2] == (x_type.shape[2] + 2 * ph - w_type.shape[2]) // sy + 1,
            offset_type.shape[3] == (x_type.shape[3] + 2 * pw - w_type.shape[3]) // sx + 1,
        )
        if type_check.eval(n_in) == 4:
            b_type = in_types[3]
            type_check.expect(
                b_type.dtype == x_type.dtype,
                b_type.ndim == 1,
                b_type.shape[0] == w_type.shape[0],
            )

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, offset, W = inputs[:3]
        c_out, c_in, kh, kw = W.shape
        n, _, out_h, out_w = offset.shape
        geometry = _Geometry(offset, x.shape[2:], (kh, kw), self.stride, self.pad)
        col = _sample(x, geometry).reshape(n * out_h * out_w, kh * kw * c_in)
        w_cols = W.transpose(2, 3, 1, 0).reshape(kh * kw * c_in, c_out)
        y = matmul_as(col, w_cols, x.dtype).reshape(n, out_h, out_w, c_out)
        y = y.transpose(0, 3, 1, 2).copy()
        if len(inputs) == 4:
            y += inputs[3][:, None, None]
        return (y,)

    def backward(self, indexes, grad_outputs):
        x, offset, W = self.get_retained_inputs()
        gy = grad_outputs[0]
        c_out, c_in, kh, kw = W.shape
        n, _, out_h, out_w = offset.shape
        n_out, n_feat = n * out_h * out_w, kh * kw * c_in
        gy_rows = ops.reshape(ops.transpose(gy, (0, 2, 3, 1)), (n_out, c_out))
        ret = {}
        sample_targets = tuple([i for i in indexes if i < 2])
        if sample_targets:
            w_cols = ops.reshape(ops.transpose(W, (2, 3, 1, 0)), (n_feat, c_out))
            gcol = ops.matmul(gy_rows, w_cols, transb=True)
            gcol = ops.reshape(gcol, (n, out_h, out_w, kh * kw, c_in))
            geometry = _Geometry(offset.array, x.shape[2:], (kh, kw), self.stride, self.pad)
            grads = _sample_grads(geometry, x, offset, gcol, sample_targets)
            ret.update(zip(sample_targets, grads))
        if 2 in indexes:
            col = _DeformableSample((kh, kw), self.stride, self.pad).apply((x, offset))[0]
            gw = ops.matmul(ops.reshape(col, (n_out, n_feat)), gy_rows, transa=True)
            ret[2] = ops.transpose(ops.reshape(gw, (kh, kw, c_in, c_out)), (3, 2, 0, 1))
        if 3 in indexes:
            ret[3] = ops.sum(gy, axis=(0, 2, 3))
        return tuple([ret[i] for i in indexes])


def deformable_convolution_2d_sampler(x, offset, W, b=None, stride=1, pad=0):
    """Two-dimensional deformable convolution, with the offsets given.

    A convolution whose every tap reads ``x`` at a point moved by its own
    offset (Dai et al., `Deformable Convolutional Networks
    <https://arxiv.org/abs/1703.06211>`_). Tap :math:`(p, q)` of the window at
    output :math:`(i, j)` reads the point

    .. math::

        (i s_Y - p_H + p + \\Delta^y_{pq,ij},\\;
         j s_X - p_W + q + \\Delta^x_{pq,ij})

    by bilinear interpolation of its four neighbouring pixels, pixels outside
    the image being zero; then

    .. math::

        y_{n,o,i,j} = \\sum_{c,p,q} W_{o,c,p,q}\\, \\tilde x_{n,c}(\\text{point}) + b_o.

    With all offsets zero this is :func:`~dbr.functions.convolution_2d`. The
    output is differentiable in ``x``, ``offset``, ``W`` and ``b`` except
    where a point has an integer coordinate, and twice differentiable.

    Args:
        x (Variable or array): input of shape :math:`(n, c_I, h, w)`; float16,
            float32 or float64.
        offset (Variable or array): offsets of shape
            :math:`(n, 2 k_H k_W, h_O, w_O)` and ``x``'s dtype; the first
            :math:`k_H k_W` channels are the horizontal offsets
            :math:`\\Delta^x` and the last :math:`k_H k_W` the vertical ones
            :math:`\\Delta^y`, taps in row-major order.
        W (Variable or array): filters of shape :math:`(c_O, c_I, k_H, k_W)`.
        b (Variable, array or None): bias of shape :math:`(c_O,)`.
        stride (int or pair of ints): the strides :math:`(s_Y, s_X)`.
        pad (int or pair of ints): the zero padding :math:`(p_H, p_W)`.

    Returns:
        Variable: of shape :math:`(n, c_O, h_O, w_O)` and ``x``'s dtype, with
        :math:`h_O = \\lfloor (h + 2 p_H - k_H) / s_Y \\rfloor + 1` and
        :math:`w_O = \\lfloor (w + 2 p_W - k_W) / s_X \\rfloor + 1`.

    Raises:
        InvalidType: the shapes or dtypes do not fit (``offset``'s spatial
            size must be :math:`(h_O, w_O)`).
        TypeError, ValueError: ``stride`` is not one or two positive ints, or
            ``pad`` not one or two non-negative ints.

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> W = np.ones((1, 1, 1, 1), np.float32)
    >>> offset = np.full((1, 2, 4, 4), 0.5, np.float32)  # half a pixel right and down
    >>> deformable_convolution_2d_sampler(x, offset, W).array[0, 0]
    array([[ 2.5 ,  3.5 ,  4.5 ,  2.5 ],
           [ 6.5 ,  7.5 ,  8.5 ,  4.5 ],
           [10.5 , 11.5 , 12.5 ,  6.5 ],
           [ 6.25,  6.75,  7.25,  3.75]], dtype=float32)
    """
    stride = as_tuple(stride, 2, "stride", _WHO, 1)
    pad = as_tuple(pad, 2, "pad", _WHO)
    func = DeformableConvolution2DSampler(stride, pad)
    return func.apply((x, offset, W) if b is None else (x, offset, W, b))[0]
