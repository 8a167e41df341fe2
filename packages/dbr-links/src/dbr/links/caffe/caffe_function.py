"""CaffeFunction: a Caffe model file (``.caffemodel``) run as a chain of dbr's links."""

import functools
import os
import warnings

import numpy

import dbr.functions as F
from dbr.core import Chain, config, using_config
from dbr.links.caffe import _proto
from dbr.links.caffe._wire import CaffeFormatError, decode
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.connection.deconvolution_2d import Deconvolution2D
from dbr.links.connection.linear import Linear
from dbr.links.connection.scale import Scale
from dbr.links.normalization.batch_normalization import BatchNormalization

_SETUP = {}
_IGNORED = frozenset({"Data", "Input"})


def _layer_type(name):
    def register(method):
        _SETUP[name] = method
        return method

    return register


def read_net(path):
    """The NetParameter of the binary Caffe file at ``path``, decoded (see ``_proto.NET``).

    Raises:
        CaffeFormatError: the file is not a well-formed NetParameter (a
            length past the end of its message, a wrong wire type); the
            message names the file and the field.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        buffer = f.read()
    return decode(_proto.NET, buffer, path)


class CaffeFunction(Chain):
    """A Caffe model, read from its binary ``.caffemodel`` file, as a chain of dbr's links.

    Each Caffe layer with parameters becomes a child link named after the
    layer (``Convolution2D``, ``Deconvolution2D``, ``Linear``,
    ``BatchNormalization``, ``Scale``); the others become functions.
    Calling the chain interprets the network: each layer whose bottom blobs
    are known is applied in file order, so a sub-network runs by giving
    its inputs and asking for its outputs. The graph is recorded as any dbr
    forward is, so the network can be fine-tuned. Both the current ``layer``
    field and the V1 ``layers`` field of NetParameter are read; the file is
    parsed by dbr itself (no Caffe, no protobuf package).

    Supported layer types: Convolution, Deconvolution (with groups and
    dilation), InnerProduct, Pooling (max, average, global), ReLU (with
    ``negative_slope``), Sigmoid, TanH, Softmax, SoftmaxWithLoss, LRN
    (across channels), Dropout, BatchNorm, Scale, Eltwise (product, sum with
    coefficients, max), Concat, Slice, Split and Reshape. Data and Input
    layers are ignored. Any other type is skipped with a warning that names
    the layer, its type and the blobs that will therefore not be computed,
    as Chainer skips them.

    As in Chainer, a max pooling covers the input to its end as Caffe does
    (``cover_all=True``), the weights of a grouped convolution are stored
    block-diagonally in a full ``(out, in, kh, kw)`` array, and BatchNorm
    becomes a :class:`~dbr.links.BatchNormalization` without scale or shift
    whose statistics are divided by the blob of Caffe's scale factor (a
    factor of zero gives zero statistics, as in Caffe).

    Args:
        model_path (str or os.PathLike): the binary-proto model file.

    Attributes:
        forwards (dict): each layer name to what computes it (a child link
            or a function).
        layers (list): ``(layer name, bottom blob names, top blob names)``
            in file order (Split layers are resolved away).
        split_map (dict): each Split top to the blob it copies.
        skipped (list): ``(layer name, type)`` of the layers skipped.

    Raises:
        CaffeFormatError: the file is damaged or a layer's blobs do not
            match its parameters; the message names the file, the layer,
            the field, and what was expected and found.
        ValueError: a layer asks for what dbr does not compute (an
            InnerProduct with ``axis != 1``, a within-channel LRN, a
            stochastic pooling, a partial Reshape).

    .. admonition:: Example

       >>> func = CaffeFunction('bvlc_reference_caffenet.caffemodel')  # doctest: +SKIP
       >>> y, = func(inputs={'data': x}, outputs=['fc8'])  # doctest: +SKIP
    """

    def __init__(self, model_path):
        super().__init__()
        self._path = os.fspath(model_path)
        net = read_net(self._path)
        self.forwards = {}
        self.split_map = {}
        self.layers = []
        self.skipped = []
        self._links = set()
        skipped_tops = {}
        if net.layer:
            entries = [(layer, layer.type, f"layer[{i}]") for i, layer in enumerate(net.layer)]
        else:
            entries = [
                (layer, _proto.V1_TYPES.get(layer.type, f"V1 type {layer.type}"), f"layers[{i}]")
                for i, layer in enumerate(net.layers)
            ]
        for layer, type_name, where in entries:
            setup = _SETUP.get(type_name)
            if setup is not None:
                setup(_LayerBuilder(self, layer, f"{where} {layer.name!r} ({type_name})"))
            elif type_name not in _IGNORED:
                self.skipped.append((layer.name, type_name))
                skipped_tops[layer.name] = (type_name, list(layer.bottom), list(layer.top))
        for name, (type_name, bottom, top) in skipped_tops.items():
            warnings.warn(self._skip_message(name, type_name, bottom, top), stacklevel=2)

    def _skip_message(self, name, type_name, bottom, top):
        in_place = [blob for blob in top if blob in bottom]
        lost = {blob for blob in top if blob not in bottom}
        for _, layer_bottom, layer_top in self.layers:
            if lost.intersection(layer_bottom):
                lost.update(layer_top)
        text = (
            f"CaffeFunction: {self._path}: skipped layer {name!r} of type {type_name!r}, "
            f"which dbr does not support;"
        )
        if lost:
            text += f" the blobs {sorted(lost)} cannot be computed"
        if in_place:
            text += (
                f"{' and' if lost else ''} the in-place blobs {in_place} keep the values before it"
            )
        return text if lost or in_place else text + " it has no outputs"

    def forward(self, inputs, outputs, disable=(), **kwargs):
        """Run the part of the network that computes ``outputs`` from ``inputs``.

        Layers are applied in file order; a layer is applied when it is not
        disabled and all its bottom blobs are known (given or computed).

        Args:
            inputs (dict): blob names to their values (Variables or arrays),
                e.g. ``{'data': x}``.
            outputs (iterable of str): the blob names whose values to return.
            disable (iterable of str): layer names not to apply.

        Returns:
            tuple: the values of ``outputs``, in their order.

        Raises:
            KeyError: an output blob that was not computed (its message says
                which blobs were).
            ValueError: the ``train`` argument of Chainer v1; use
                ``dbr.core.using_config('train', ...)``.
            TypeError: another unexpected keyword argument.
        """
        if kwargs:
            if "train" in kwargs:
                raise ValueError(
                    "CaffeFunction.forward: the train argument is not supported anymore; "
                    "use dbr.core.using_config('train', ...)"
                )
            raise TypeError(
                f"CaffeFunction.forward: got unexpected keyword argument(s) {', '.join(kwargs)}"
            )
        variables = dict(inputs)
        disable = set(disable)
        for name, bottom, top in self.layers:
            if name in disable or any(blob not in variables for blob in bottom):
                continue
            func = self[name] if name in self._links else self.forwards[name]
            results = func(*[variables[blob] for blob in bottom])
            if not isinstance(results, (tuple, list)):
                results = (results,)
            variables.update(zip(top, results))
        self.variables = variables
        missing = [blob for blob in outputs if blob not in variables]
        if missing:
            raise KeyError(
                f"CaffeFunction.forward: {self._path}: the blobs {missing} were not computed "
                f"from the inputs {sorted(inputs)} (disabled layers: {sorted(disable)}); "
                f"computed: {sorted(variables)}"
            )
        return tuple(variables[blob] for blob in outputs)


class _LayerBuilder:
    """One layer being added to a CaffeFunction: its message and how to report it."""

    def __init__(self, owner, layer, where):
        self.owner = owner
        self.layer = layer
        self.where = where

    def fail(self, field, expected, got):
        """Raise CaffeFormatError naming the file, this layer and ``field``."""
        raise CaffeFormatError(
            f"CaffeFunction: {self.owner._path}: {self.where}: {field}: expected {expected}, "
            f"got {got}"
        )

    def unsupported(self, field, value, what):
        """Raise ValueError: the layer asks for ``what``, which dbr does not compute."""
        raise ValueError(
            f"CaffeFunction: {self.owner._path}: {self.where}: {field}={value!r} asks for "
            f"{what}, which CaffeFunction does not support"
        )

    def add(self, forward):
        """Record the layer with ``forward`` (a function) as what computes it."""
        owner = self.owner
        bottom = [owner.split_map.get(blob, blob) for blob in self.layer.bottom]
        owner.layers.append((self.layer.name, bottom, list(self.layer.top)))
        owner.forwards[self.layer.name] = forward

    def add_link(self, link, forward=None):
        """Make ``link`` the child named after the layer and record the layer."""
        owner = self.owner
        name = self.layer.name
        if name in owner._links or (hasattr(owner, name) and name not in owner.forwards):
            self.fail("name", "a name no other layer or CaffeFunction attribute has", repr(name))
        with owner.init_scope():
            setattr(owner, name, link)
        owner._links.add(name)
        self.add(link)
        if forward is not None:
            owner._links.discard(name)
            owner.forwards[name] = forward

    def blobs(self, count, names):
        """The layer's first ``count`` blobs, refusing fewer (``names`` says what each is)."""
        blobs = self.layer.blobs
        if len(blobs) < count:
            self.fail("blobs", f"{count} blobs ({', '.join(names[:count])})", f"{len(blobs)}")
        return blobs[:count]

    def data(self, blob, index, size=None, shaped=True):
        """Blob ``index``'s values as a float array, checked to hold ``size`` values.

        With ``shaped``, the values must also fill the blob's declared shape;
        a bias is read without (Chainer's exporter gives a Deconvolution's
        bias the shape of the input channels).
        """
        values = blob.data if len(blob.data) or not len(blob.double_data) else blob.double_data
        values = numpy.asarray(values)
        dims = dims_of(blob)
        if shaped and dims and int(numpy.prod(dims)) != values.size:
            self.fail(
                f"blobs[{index}]",
                f"{int(numpy.prod(dims))} values for its shape {dims}",
                f"{values.size}",
            )
        if size is not None and values.size != size:
            self.fail(f"blobs[{index}]", f"{size} values", f"{values.size} (shape {dims})")
        return values.astype(numpy.dtype(config.dtype))


def dims_of(blob):
    """A blob's shape: ``shape.dim``, or the legacy ``(num, channels, height, width)``."""
    if blob.has("shape"):
        return [int(d) for d in blob.shape.dim]
    legacy = [blob.num, blob.channels, blob.height, blob.width]
    return [int(d) for d in legacy] if any(legacy) else []


def _pair(builder, param, name, default):
    """A window option: ``<name>_h``/``<name>_w`` when set, else ``name`` (one or two values)."""
    short = name.partition("_")[0]
    h, w = getattr(param, f"{short}_h", 0), getattr(param, f"{short}_w", 0)
    if h or w:
        return (h, w)
    value = getattr(param, name)
    if not isinstance(value, (list, numpy.ndarray)):
        return (value, value) if param.has(name) else (default, default)
    values = [int(v) for v in value]
    if len(values) > 2:
        builder.fail(f"{name}", "one or two values (a 2-d window)", f"{values}")
    if not values:
        return (default, default)
    return (values[0], values[-1])


def _grouped_weight(builder, blob, shape, group):
    """A grouped filter blob as Chainer stores it: block-diagonal in a full ``shape`` array."""
    first, second = shape[:2]
    data = builder.data(blob, 0, first * (second // group) * shape[2] * shape[3])
    weight = numpy.zeros(shape, dtype=data.dtype)
    parts = data.reshape(group, first // group, second // group, *shape[2:])
    for i in range(group):
        a, b = first // group, second // group
        weight[i * a : (i + 1) * a, i * b : (i + 1) * b] = parts[i]
    return weight


def _convolution(builder, transposed):
    param = builder.layer.convolution_param
    names = ("weights", "bias")
    has_bias = param.bias_term
    blobs = builder.blobs(2 if has_bias else 1, names)
    dims = dims_of(blobs[0])
    if len(dims) != 4:
        builder.fail("blobs[0]", "a 4-d filter (num, channels, height, width)", f"shape {dims}")
    ksize = _pair(builder, param, "kernel_size", 0)
    if ksize != tuple(dims[2:]):
        builder.fail("convolution_param.kernel_size", f"the filter's {tuple(dims[2:])}", ksize)
    group = param.group
    if group < 1 or dims[0] % group:
        builder.fail("convolution_param.group", f"a divisor of the filter's num {dims[0]}", group)
    num, channels = dims[0], dims[1]
    in_size, out_size = (num, channels * group) if transposed else (channels * group, num)
    full = (in_size, out_size) if transposed else (out_size, in_size)
    weight = _grouped_weight(builder, blobs[0], (*full, *dims[2:]), group)
    bias = builder.data(blobs[1], 1, out_size, shaped=False) if has_bias else None
    link_class = Deconvolution2D if transposed else Convolution2D
    link = link_class(
        in_size, out_size, ksize, _pair(builder, param, "stride", 1),
        _pair(builder, param, "pad", 0), nobias=not has_bias, initialW=weight,
        initial_bias=bias, dilate=_pair(builder, param, "dilation", 1),
    )  # fmt: skip
    builder.add_link(link)


@_layer_type("Convolution")
def _setup_convolution(builder):
    _convolution(builder, transposed=False)


@_layer_type("Deconvolution")
def _setup_deconvolution(builder):
    _convolution(builder, transposed=True)


@_layer_type("InnerProduct")
def _setup_inner_product(builder):
    param = builder.layer.inner_product_param
    if param.axis != 1:
        builder.unsupported("inner_product_param.axis", param.axis, "flattening from another axis")
    blobs = builder.blobs(2 if param.bias_term else 1, ("weights", "bias"))
    dims = dims_of(blobs[0])
    if len(dims) not in (2, 4) or (len(dims) == 4 and dims[:2] != [1, 1]):
        builder.fail("blobs[0]", "a 2-d weight (or 4-d with num = channels = 1)", f"shape {dims}")
    rows, cols = dims[-2:]
    weight = builder.data(blobs[0], 0).reshape(rows, cols)
    if param.transpose:
        weight = weight.T
    out_size, in_size = weight.shape
    if param.num_output and param.num_output != out_size:
        builder.fail(
            "inner_product_param.num_output", f"the weight's {out_size} rows", param.num_output
        )
    bias = builder.data(blobs[1], 1, out_size, shaped=False) if param.bias_term else None
    builder.add_link(
        Linear(in_size, out_size, nobias=not param.bias_term, initialW=weight, initial_bias=bias)
    )


@_layer_type("Pooling")
def _setup_pooling(builder):
    param = builder.layer.pooling_param
    if param.pool not in (_proto.POOL_MAX, _proto.POOL_AVE):
        builder.unsupported("pooling_param.pool", param.pool, "stochastic pooling")
    pool = F.max_pooling_2d if param.pool == _proto.POOL_MAX else F.average_pooling_2d
    stride = _pair(builder, param, "stride", 1)
    pad = _pair(builder, param, "pad", 0)
    ksize = _pair(builder, param, "kernel_size", 0)
    if param.global_pooling and not any(ksize):
        ksize = None
    builder.add(functools.partial(_pool, pool, ksize, stride, pad))


def _pool(pool, ksize, stride, pad, x):
    return pool(x, x.shape[2:] if ksize is None else ksize, stride=stride, pad=pad)


@_layer_type("ReLU")
def _setup_relu(builder):
    slope = builder.layer.relu_param.negative_slope
    builder.add(functools.partial(F.leaky_relu, slope=slope) if slope != 0 else F.relu)


@_layer_type("Sigmoid")
def _setup_sigmoid(builder):
    builder.add(F.sigmoid)


@_layer_type("TanH")
def _setup_tanh(builder):
    builder.add(F.tanh)


@_layer_type("Softmax")
def _setup_softmax(builder):
    builder.add(functools.partial(F.softmax, axis=builder.layer.softmax_param.axis))


@_layer_type("SoftmaxWithLoss")
def _setup_softmax_with_loss(builder):
    axis = builder.layer.softmax_param.axis
    if axis != 1:
        builder.unsupported("softmax_param.axis", axis, "a loss over another axis than 1")
    builder.add(F.softmax_cross_entropy)


@_layer_type("LRN")
def _setup_lrn(builder):
    param = builder.layer.lrn_param
    if param.norm_region != 0:
        builder.unsupported("lrn_param.norm_region", param.norm_region, "within-channel LRN")
    builder.add(
        functools.partial(
            F.local_response_normalization,
            n=param.local_size,
            k=param.k,
            alpha=param.alpha / param.local_size,
            beta=param.beta,
        )  # fmt: skip
    )


@_layer_type("Dropout")
def _setup_dropout(builder):
    builder.add(functools.partial(F.dropout, ratio=builder.layer.dropout_param.dropout_ratio))


@_layer_type("BatchNorm")
def _setup_batch_norm(builder):
    param = builder.layer.batch_norm_param
    blobs = builder.layer.blobs
    builder.blobs(2, ("mean", "variance", "scale factor"))
    mean = builder.data(blobs[0], 0)
    var = builder.data(blobs[1], 1, mean.size)
    if len(blobs) >= 3:
        factor = builder.data(blobs[2], 2)
        if factor.size < 1:
            builder.fail("blobs[2]", "the scale factor (1 value)", "no value")
        scale = 0.0 if factor[0] == 0 else 1.0 / factor[0]
        mean, var = mean * scale, var * scale
    link = BatchNormalization(
        mean.size, decay=param.moving_average_fraction, eps=param.eps, use_gamma=False,
        use_beta=False, initial_avg_mean=mean, initial_avg_var=var,
    )  # fmt: skip
    builder.add_link(
        link, _TestMode(builder.owner, builder.layer.name) if param.use_global_stats else None
    )


class _TestMode:
    """Calls the owner's child ``name`` with ``config.train`` False (Caffe's use_global_stats)."""

    def __init__(self, owner, name):
        self.owner = owner
        self.name = name

    def __call__(self, x):
        with using_config("train", False):
            return self.owner[self.name](x)


@_layer_type("Scale")
def _setup_scale(builder):
    param = builder.layer.scale_param
    blobs = builder.layer.blobs
    if len(builder.layer.bottom) == 1:
        builder.blobs(2 if param.bias_term else 1, ("scale", "bias"))
        shape = tuple(dims_of(blobs[0]))
        link = Scale(param.axis, shape, param.bias_term)
        link.W.array[...] = builder.data(blobs[0], 0).reshape(shape)
        bias_blob = 1
    else:
        if param.bias_term:
            builder.blobs(1, ("bias",))
        shape = tuple(dims_of(blobs[0])) if param.bias_term else None
        link = Scale(param.axis, bias_term=param.bias_term, bias_shape=shape)
        bias_blob = 0
    if param.bias_term:
        values = builder.data(blobs[bias_blob], bias_blob)
        link.bias.b.array[...] = values.reshape(link.bias.b.shape)
    builder.add_link(link)


@_layer_type("Eltwise")
def _setup_eltwise(builder):
    param = builder.layer.eltwise_param
    coeffs = [float(c) for c in param.coeff] or None
    n_bottom = len(builder.layer.bottom)
    if param.operation == _proto.ELTWISE_SUM and coeffs and len(coeffs) != n_bottom:
        builder.fail(
            "eltwise_param.coeff", f"{n_bottom} coefficients (one per bottom)", len(coeffs)
        )
    if param.operation not in (_proto.ELTWISE_PROD, _proto.ELTWISE_SUM, _proto.ELTWISE_MAX):
        builder.fail("eltwise_param.operation", "PROD (0), SUM (1) or MAX (2)", param.operation)
    builder.add(functools.partial(_eltwise, param.operation, coeffs))


def _eltwise(operation, coeffs, *xs):
    if operation == _proto.ELTWISE_PROD:
        return functools.reduce(lambda a, b: a * b, xs)
    if operation == _proto.ELTWISE_MAX:
        return functools.reduce(F.maximum, xs)
    if coeffs is not None:
        xs = [x * c for x, c in zip(xs, coeffs)]
    return functools.reduce(lambda a, b: a + b, xs)


@_layer_type("Concat")
def _setup_concat(builder):
    param = builder.layer.concat_param
    axis = param.concat_dim if param.axis == 1 and param.concat_dim != 1 else param.axis
    builder.add(lambda *xs: F.concat(xs, axis=axis))


@_layer_type("Slice")
def _setup_slice(builder):
    param = builder.layer.slice_param
    axis = param.axis if param.has("axis") else param.slice_dim if param.has("slice_dim") else 1
    points = [int(p) for p in param.slice_point]
    sections = points if points else len(builder.layer.top)
    builder.add(functools.partial(F.split_axis, indices_or_sections=sections, axis=axis))


@_layer_type("Split")
def _setup_split(builder):
    owner = builder.owner
    source = owner.split_map.get(builder.layer.bottom[0], builder.layer.bottom[0])
    for top in builder.layer.top:
        owner.split_map[top] = source


@_layer_type("Reshape")
def _setup_reshape(builder):
    param = builder.layer.reshape_param
    if param.axis != 0 or param.num_axes != -1:
        builder.unsupported(
            "reshape_param.axis/num_axes", (param.axis, param.num_axes),
            "reshaping part of the axes",
        )  # fmt: skip
    dims = tuple(int(d) for d in param.shape.dim)
    builder.add(functools.partial(_reshape, dims))


def _reshape(dims, x):
    shape = tuple(x.shape[i] if d == 0 else d for i, d in enumerate(dims))
    return F.reshape(x, shape)


__all__ = ["CaffeFunction"]
