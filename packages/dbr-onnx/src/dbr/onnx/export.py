"""export: run a model's forward once, record its graph and write it as an ONNX model."""

import os
import warnings
import weakref

import onnx
from dbr.core import Variable, backend
from dbr.core.configuration import using_config
from dbr.core.function_hook import FunctionHook
from dbr.core.link_hook import LinkHook
from dbr.core.serializers import write_atomically
from dbr.onnx import _constants, _opset, _patch, onnx_helper
from dbr.onnx._graph import Context, FunctionConverterParams, to_numpy
from dbr.onnx._opset import MINIMUM_OPSET_VERSION
from dbr.onnx.converters import converters as _builtin_converters
from onnx import helper, numpy_helper, shape_inference

__all__ = [
    "MAXIMUM_OPSET_VERSION",  # noqa: F822 (module __getattr__: computed when first read)
    "MINIMUM_OPSET_VERSION",
    "DataDependentConstantError",
    "RetainInputHook",
    "UnsupportedFunctionError",
    "export",
]


def _reached(functions, live):
    """Yield, in order, the ``functions`` reading a value in ``live``, adding their outputs to it.

    ``live`` holds ``id``s of variable nodes; a function none of whose inputs is live
    is passed over (it does not depend on the model's inputs or on kept values).
    """
    for func in functions:
        if not any(id(x) in live for x in func.inputs):
            continue
        for ref in func.outputs:
            out = ref()
            if out is not None:
                live.add(id(out))
        yield func


class UnsupportedFunctionError(ValueError):
    """Raised when the recorded graph holds a function that no converter handles."""


DataDependentConstantError = _constants.DataDependentConstantError


def __getattr__(name):
    # MAXIMUM_OPSET_VERSION asks ONNX Runtime which opsets it loads: done when first read.
    if name == "MAXIMUM_OPSET_VERSION":
        return _opset.maximum_opset_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _RetainFunctionInputs(FunctionHook):
    """The function-hook half of :class:`RetainInputHook`."""

    name = "dbr.onnx.RetainInputHook"

    def __init__(self, owner):
        self.owner = owner

    def forward_preprocess(self, function, in_data):
        self.owner._settle()

    def forward_postprocess(self, function, in_data):
        self.owner._pending.append((function, in_data, frozenset(self.owner.link_inputs)))


class RetainInputHook(LinkHook):
    """Keeps alive the Variables that functions take but no link was given, while it is on.

    A FunctionNode refers to its inputs' Variables weakly, so a Variable made
    inside a forward (``Variable(numpy.array(3))``, or the one ``apply`` makes
    for an array argument) is gone once the forward returns, and a walk over
    the graph afterwards finds a node without its Variable. Used as a context
    manager, this hook keeps every such input alive in :attr:`retain_inputs`
    (and gives a node whose Variable is already gone a new one holding the
    array the function saw); the Variables passed to the link being called
    are not kept, since its caller holds them.

    Attributes:
        retain_inputs (list of Variable): the Variables kept.
        link_inputs (set of int): ids of the Variables passed to the links
            being called.
    """

    name = "dbr.onnx.RetainInputHook"

    def __init__(self):
        self.link_inputs = set()
        self.retain_inputs = []
        self._pending = []
        self._function_hook = _RetainFunctionInputs(self)

    def _settle(self):
        # A function's inputs are set once its apply returns: read them at the next event.
        pending, self._pending = self._pending, []
        for function, in_data, link_inputs in pending:
            for node, array in zip(function.inputs or (), in_data):
                var = node.get_variable_or_none()
                if var is None:
                    var = Variable(array, requires_grad=node.requires_grad)
                    var._node = node
                    node._variable = weakref.ref(var)
                    self.retain_inputs.append(var)
                elif id(var) not in link_inputs:
                    self.retain_inputs.append(var)

    @staticmethod
    def _variable_ids(args):
        if isinstance(args, Variable):
            return {id(args)}
        if isinstance(args, (list, tuple)):
            return set().union(*(RetainInputHook._variable_ids(a) for a in args))
        if isinstance(args, dict):
            return RetainInputHook._variable_ids(list(args.values()))
        return set()

    def forward_preprocess(self, args):
        """Note the Variables given to the link (they are not retained)."""
        self._settle()
        self.link_inputs |= self._variable_ids(args.args)
        self.link_inputs |= self._variable_ids(args.kwargs)

    def forward_postprocess(self, args):
        """Retain what the link's functions took, then forget its inputs."""
        self._settle()
        self.link_inputs.clear()

    def __enter__(self):
        self._function_hook.__enter__()
        try:
            return super().__enter__()
        except BaseException:
            self._function_hook.__exit__(None, None, None)
            raise

    def __exit__(self, *exc_info):
        try:
            self._settle()
        finally:
            super().__exit__(*exc_info)
            self._function_hook.__exit__(*exc_info)


def export(
    model,
    args,
    filename=None,
    export_params=True,
    graph_name="Graph",
    save_text=False,
    opset_version=None,
    train=False,
    return_named_inout=False,
    external_converters=None,
    external_opset_imports=None,
    input_names=None,
    output_names=None,
    input_shapes=None,
):
    """Export ``model`` to ONNX by running its forward once on ``args``.

    The forward runs under ``train=False`` (unless ``train``) with a function
    hook recording every FunctionNode applied; the graph from ``args`` to the
    outputs is then converted node by node. Only what the outputs depend on is
    written; values that depend on neither the inputs nor the parameters are
    folded into constants. A forward whose control flow depends on values
    exports the branch this run took, and loops come out unrolled.

    A value computed outside the graph (on ``.array``, with ``xp``, or by a
    function that records no FunctionNode) would be folded too, wrongly when
    it depends on the inputs; so would a number read off an array that a
    function is built with (``h - float(h.array.mean())``,
    ``F.clip(h, 0, float(h.array.max()))``), which its converter writes into
    the graph. So when anything is folded, or a function written holds a
    number or array attribute, the forward runs a second time on perturbed
    inputs (floats moved by 1 to 2, non-negative integers shifted within the
    values seen; if the model rejects those, floats scaled by 1.01 to 1.02),
    on a copy of ``model`` sharing its arrays, and a folded value or an
    attribute (as the function was built, before its forward) that changes
    raises :class:`DataDependentConstantError` before anything is written.
    A model that rejects every perturbed input is exported with a warning.
    ``F.sign``, ``F.floor``, ``F.ceil`` and ``F.fix``, which make no graph
    node, are bound to node-recording versions while the forward runs
    (in ``dbr.functions``, for the whole process), and export to ONNX's Sign,
    Floor and Ceil.

    Names follow onnx_chainer's: parameters become initializers named by
    their paths in ``model`` (``param_predictor_l1_W`` for ``/predictor/l1/W``),
    as do the persistent arrays of links that a function reads
    (``param_bn_avg_mean``); inputs are named ``Input_0, ...`` and each output
    after the function that computed it (``LinearFunction_1``: the second
    ``LinearFunction``), unless ``input_names``/``output_names`` say otherwise.
    Converters' constants are ``Constant`` nodes (integer ones are initializers
    before opset 9, whose Constant holds floating-point tensors only).

    Args:
        model (callable): the model, usually a :class:`dbr.core.Chain`; it is
            called as ``model(*args)`` (list or tuple), ``model(**args)`` (dict)
            or ``model(args)`` (a single array or Variable).
        args: the example inputs (arrays or Variables).
        filename (str or file-like): where to write the model, or None.
        export_params (bool): store the parameters as initializers; if False
            they become graph inputs without values.
        graph_name (str): the name of the ONNX graph.
        save_text (bool): also write the model as text to ``filename + '.txt'``.
        opset_version (int): the default-domain opset; None picks the newest that
            onnx and ONNX Runtime both support. Opsets from 7 work; a function
            whose operator is newer than the opset (Sign, Where, Resize, ...)
            raises ValueError naming the first opset that has it.
        train (bool): run the forward in training mode.
        return_named_inout (bool): also return the named inputs and outputs.
        external_converters (dict): converters by function name (the
            FunctionNode's ``label`` or class name), overriding the built-in
            ones; each takes a :class:`FunctionConverterParams` and returns an
            ONNX node or a sequence of them.
        external_opset_imports (dict): domain -> version of custom operator sets.
        input_names (str, list or dict): names of the inputs, one per arg.
        output_names (str, list or dict): names of the outputs, one per output.
        input_shapes (tuple, list or dict): shapes of the inputs in the graph, a
            None or str entry marking a dynamic dimension (such as the batch).

    Returns:
        onnx.ModelProto, or ``(model_proto, inputs, outputs)`` with two dicts
        from ONNX name to Variable when ``return_named_inout``.

    Raises:
        UnsupportedFunctionError: a function in the graph has no converter.
        DataDependentConstantError: a value computed outside the graph from
            the inputs would be folded into a constant, or a function is built
            with such a number.
        OSError: ``filename`` cannot be written (the error names it and its
            directory); nothing is left under any name.
        onnx.checker.ValidationError: the model fails onnx's checker (checked
            when ``export_params``), unless as below.

    Warns:
        UserWarning: a parameter of ``model`` is not initialized (its link was
            never called), so it is left out; or the model fails onnx's checker
            while ``external_converters`` are given without
            ``external_opset_imports`` (a custom operator without a domain),
            so the model is returned unchecked; or the forward failed on every
            perturbed input, so the constants could not be checked.
    """
    opset_version = _opset.resolve_opset_version(opset_version)
    converters = dict(_builtin_converters)
    if external_converters:
        if not isinstance(external_converters, dict):
            raise TypeError(
                "export: external_converters must be a dict from function name to "
                f"converter, got {type(external_converters).__name__}"
            )
        converters.update(external_converters)
    arg_vars, call = _wrap_args(args)
    in_names = _names(input_names, arg_vars, "Input", "input_names")
    shapes = _input_shapes(input_shapes, arg_vars)

    second = _constants.model_for_second_run(model)
    recorder = _constants.Recorder(model)
    with _patch.recording_functions():
        with using_config("train", train), using_config("enable_backprop", True), recorder:
            outputs = call(model)
        out_vars = _flatten_outputs(outputs)
        out_names = None
        if output_names is not None:
            out_names = _names(output_names, out_vars, "Output", "output_names")

        builder = _GraphBuilder(recorder, opset_version, converters)
        graph, out_names = builder.build(
            model, arg_vars, in_names, shapes, out_vars, out_names, graph_name, export_params
        )
        _constants.check(
            builder.folded, builder.converted, recorder, model, second, args, _wrap_args, train
        )
    opset_imports = [helper.make_opsetid("", opset_version)]
    for domain, version in (external_opset_imports or {}).items():
        opset_imports.append(helper.make_opsetid(domain, version))
    proto = helper.make_model(
        graph, producer_name="dbr.onnx", producer_version=_version(), opset_imports=opset_imports
    )
    proto.ir_version = _opset.ir_version_for(opset_version)
    if proto.ir_version < 4:
        # Before IR 4 every initializer must also be a graph input.
        listed = {i.name for i in proto.graph.input}
        proto.graph.input.extend(
            helper.make_tensor_value_info(t.name, t.data_type, t.dims)
            for t in proto.graph.initializer
            if t.name not in listed
        )
    if shapes is not None:
        proto = shape_inference.infer_shapes(proto)
    if export_params:
        _check_model(proto, external_converters, external_opset_imports)
    if filename is not None:
        _write(proto, filename, save_text)
    if return_named_inout:
        return (
            proto,
            dict(zip(in_names, arg_vars.values())),
            dict(zip(out_names, out_vars.values())),
        )
    return proto


def _check_model(proto, external_converters, external_opset_imports):
    """Run onnx's checker; with ``external_converters`` and no opset imports, warn instead.

    onnx's checker skips the schema of operators in a domain other than ONNX's
    own, so a custom operator with a domain passes. One without a domain fails
    it; since onnx_chainer accepts that when the operator comes from an
    external converter, the failure is then a UserWarning, not an error.
    """
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as e:
        if not external_converters or external_opset_imports:
            raise
        warnings.warn(
            "export: the exported model fails onnx's checker, ignored because "
            "external_converters are given without external_opset_imports (an operator of "
            "an external converter without a domain, such as a custom one, fails the "
            "checker); give the custom operators a domain and list it in "
            f"external_opset_imports to have the model checked. The checker said: {e}",
            UserWarning,
            stacklevel=3,
        )


def _version():
    try:
        from importlib.metadata import version

        return version("dbr-onnx")
    except Exception:  # running from a source tree
        return "0"


def _write(proto, filename, save_text):
    data = proto.SerializeToString()
    if hasattr(filename, "write"):
        filename.write(data)
        return
    filename = os.fspath(filename)
    _atomic_write(filename, data)
    if save_text:
        _atomic_write(filename + ".txt", str(proto).encode())


def _atomic_write(path, data, who="export"):
    """Write ``data`` to ``path`` through a temporary file (mode as the umask leaves it).

    An error names ``path`` and its directory, not the temporary file.
    """

    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(data)

    try:
        write_atomically(path, write)
    except OSError as e:
        directory = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(directory):
            why = f"into the directory {directory!r}"
        else:
            why = f"(its directory {directory!r} does not exist or is not a directory)"
        raise OSError(e.errno, f"{who}: cannot write the file {why}: {e.strerror}", path) from e


def _as_variable(x, where):
    if isinstance(x, Variable):
        return x
    if isinstance(x, backend.get_array_types()):
        return Variable(x)
    raise TypeError(f"export: args{where} must be an array or a Variable, got {type(x).__name__}")


def _wrap_args(args):
    """The args as an ordered dict of Variables and a function calling the model on them."""
    if isinstance(args, (list, tuple)):
        vs = {i: _as_variable(a, f"[{i}]") for i, a in enumerate(args)}
        return vs, lambda model: model(*vs.values())
    if isinstance(args, dict):
        vs = {k: _as_variable(a, f"[{k!r}]") for k, a in args.items()}
        return vs, lambda model: model(**vs)
    if isinstance(args, (Variable, backend.get_array_types())):
        v = _as_variable(args, "")
        return {0: v}, lambda model: model(v)
    raise TypeError(
        f"export: args must be a list, tuple, dict, array or Variable, got {type(args).__name__}"
    )


class _OutputTypeError(TypeError, RuntimeError):
    """The model returned neither a Variable nor a collection of them.

    Also a RuntimeError, the type onnx_chainer raised for it.
    """


class _OutputElementTypeError(TypeError, ValueError):
    """An item of the tuple, list or dict the model returned is not a Variable.

    Also a ValueError, the type onnx_chainer raised for it.
    """


def _flatten_outputs(outputs):
    if isinstance(outputs, dict):
        keys, values = list(outputs), list(outputs.values())
        error = _OutputElementTypeError
    elif isinstance(outputs, (list, tuple)):
        keys, values = list(range(len(outputs))), list(outputs)
        error = _OutputElementTypeError
    else:
        keys, values = [0], [outputs]
        error = _OutputTypeError
    for k, v in zip(keys, values):
        if not isinstance(v, Variable):
            raise error(
                f"export: the model's output {k!r} must be a Variable, got {type(v).__name__}"
            )
    return dict(zip(keys, values))


def _names(names, variables, prefix, argname):
    keys = list(variables)
    if names is None:
        return [f"{prefix}_{i}" for i in range(len(keys))]
    if isinstance(names, str):
        names = [names]
    if isinstance(names, dict):
        missing = [k for k in keys if k not in names]
        if missing or len(names) != len(keys):
            raise ValueError(
                f"export: {argname} must name each of {keys}, got the keys {list(names)}"
            )
        names = [names[k] for k in keys]
    names = list(names)
    if len(names) != len(keys):
        raise ValueError(
            f"export: {argname} must hold {len(keys)} name(s), one per "
            f"{'arg' if prefix == 'Input' else 'output'}, got {len(names)}: {names}"
        )
    if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"export: {argname} must be distinct non-empty strings, got {names}")
    return names


def _input_shapes(shapes, arg_vars):
    if shapes is None:
        return None
    keys = list(arg_vars)
    if isinstance(shapes, tuple) and len(keys) == 1:
        shapes = [shapes]
    if isinstance(shapes, dict):
        if set(shapes) != set(keys):
            raise ValueError(f"export: input_shapes must have the keys {keys}, got {list(shapes)}")
        shapes = [shapes[k] for k in keys]
    shapes = list(shapes)
    if len(shapes) != len(keys):
        raise ValueError(
            f"export: input_shapes must hold {len(keys)} shape(s), one per arg, got {len(shapes)}"
        )
    for k, shape in zip(keys, shapes):
        if len(shape) != arg_vars[k].ndim:
            raise ValueError(
                f"export: input_shapes for arg {k!r} must have {arg_vars[k].ndim} dimensions "
                f"(the arg's shape is {arg_vars[k].shape}), got {tuple(shape)}"
            )
    return [tuple(s) for s in shapes]


def _value_info(name, dtype, shape):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype), shape)


def _persistent_names(model):
    """{id(array): ONNX name} of the persistent arrays of ``model``'s links.

    A link ``/bn``'s ``avg_mean`` is ``param_bn_avg_mean``, as its parameters are named.
    """
    found = {}
    if not hasattr(model, "namedlinks"):
        return found
    for path, link in model.namedlinks():
        for name in getattr(link, "_persistent", ()):
            value = getattr(link, name, None)
            if hasattr(value, "shape") and getattr(value, "ndim", 0) > 0:
                full = f"{path.rstrip('/')}/{name}"
                found.setdefault(id(value), onnx_helper.cleanse_param_name(full))
    return found


def function_name(func):
    """The names a converter may be registered under: the label, then the class name."""
    label = func.label
    cls = type(func).__name__
    return (label, cls) if label != cls else (cls,)


class _GraphBuilder:
    """Walks the recorded graph back from the outputs and converts each node."""

    def __init__(self, recorder, opset_version, converters):
        self.records = recorder.records
        self.opset_version = opset_version
        self.converters = converters
        self.folded = []  # the _Folded constants, once built
        self.converted = []  # the functions written to the graph, once built

    def build(
        self, model, arg_vars, in_names, shapes, out_vars, out_names, graph_name, export_params
    ):
        names = {}  # id(VariableNode) -> ONNX name
        kinds = {}  # id(VariableNode) -> "input" | "param"
        persistent_names = _persistent_names(model)
        for name, var in zip(in_names, arg_vars.values()):
            if var.node is not None:
                names[id(var.node)] = name
                kinds[id(var.node)] = "input"
        params = {}
        if hasattr(model, "namedparams"):
            for path, param in model.namedparams():
                if param.array is None:
                    warnings.warn(
                        f"export: the parameter {path!r} of the model is not initialized (its "
                        "link was not called in the forward, so its shape is unknown); it is "
                        "left out of the ONNX graph",
                        UserWarning,
                        stacklevel=3,
                    )
                    continue
                node = param._node
                if node is not None and id(node) not in names:
                    name = onnx_helper.cleanse_param_name(path)
                    names[id(node)] = name
                    kinds[id(node)] = "param"
                    params[name] = param

        functions, values = self._walk([v.node for v in out_vars.values()])
        self._check_converters(functions, kinds)

        context = Context(self.opset_version)
        for n in list(in_names) + list(out_names or ()) + list(params):
            context.unique(n)
        label_counts = {}
        nodes = []
        constant_nodes = {}
        used_params = []
        live = {k for k, kind in kinds.items()}

        def name_of(node, func, index):
            key = id(node)
            if key in names:
                if kinds.get(key) == "param" and names[key] not in used_params:
                    used_params.append(names[key])
                return names[key]
            # A value with no live creator: fold it into a constant.
            array = values.get(key)
            if array is None:
                raise RuntimeError(
                    "export: a value the outputs depend on was freed before it could be "
                    "read; keep the Variables alive during the forward"
                )
            persistent = persistent_names.get(id(array))
            if persistent is not None and persistent not in context._names:
                name = context.unique(persistent)
            else:
                name = context.unique(f"constant_{len(constant_nodes)}")
                order = self.records[id(func)][0]
                self.folded.append(_constants.Folded(order, index, func, node, array))
            constant_nodes[key] = name
            context.initializers.append(numpy_helper.from_array(to_numpy(array), name))
            names[key] = name
            return name

        out_name_of = {}
        if out_names is not None:
            out_name_of = {id(v.node): n for n, v in zip(out_names, out_vars.values())}
        for func in _reached(functions, live):
            self.converted.append(func)
            in_onnx = [name_of(x, func, j) for j, x in enumerate(func.inputs)]
            count = label_counts.get(func.label, 0)
            label_counts[func.label] = count + 1
            context.node_name = context.unique(f"{func.label}_{count}")
            out_onnx = []
            out_shapes = []
            out_dtypes = []
            for j, ref in enumerate(func.outputs):
                out = ref()
                key = None if out is None else id(out)
                if key in out_name_of:
                    name = out_name_of[key]
                elif len(func.outputs) == 1:
                    name = context.node_name
                else:
                    name = context.unique(f"{context.node_name}_{j}")
                if key is not None:
                    names[key] = name
                out_onnx.append(name)
                array = values.get(key)
                out_shapes.append(None if array is None else tuple(array.shape))
                out_dtypes.append(None if array is None else array.dtype)
            _order, _func, in_data = self.records[id(func)]
            converter = self._converter(func)
            params_ = FunctionConverterParams(
                func, self.opset_version, in_onnx, out_onnx, context,
                tuple(to_numpy(a) for a in in_data), out_shapes, out_dtypes,
            )  # fmt: skip
            with onnx_helper.converting(context.node_name):
                produced = converter(params_)
            if isinstance(produced, onnx.NodeProto):
                produced = (produced,)
            nodes.extend(context.take_constants(produced))
            nodes.extend(produced)

        # A converter that computes a function's input-dependent attribute in the graph (an
        # upsampling's indexes, from its max pooling) takes it out of the constants' check.
        in_graph = context.shared.get("computed_attributes", set())
        self.converted = [f for f in self.converted if id(f) not in in_graph]
        graph_outputs = []
        if out_names is None:
            # Named after the function that computed each (onnx_chainer's names), or
            # Output_<i> for an input returned as is or an output returned twice.
            out_names, seen = [], set(in_names)
            for i, var in enumerate(out_vars.values()):
                name = names.get(id(var.node))
                if name is None or name in seen or kinds.get(id(var.node)) is not None:
                    name = context.unique(f"Output_{i}")
                    if id(var.node) in names:
                        nodes.append(helper.make_node("Identity", [names[id(var.node)]], [name]))
                seen.add(name)
                out_names.append(name)
        for i, (name, var) in enumerate(zip(out_names, out_vars.values())):
            if id(var.node) not in live:
                raise ValueError(
                    f"export: output {i} of the model depends on none of the inputs or parameters"
                )
            if out_name_of and kinds.get(id(var.node)) is not None:
                nodes.append(helper.make_node("Identity", [names[id(var.node)]], [name]))
            graph_outputs.append(
                _value_info(name, var.dtype, None if shapes is not None else var.shape)
            )

        graph_inputs = []
        for i, (name, var) in enumerate(zip(in_names, arg_vars.values())):
            shape = var.shape if shapes is None else shapes[i]
            graph_inputs.append(_value_info(name, var.dtype, shape))
        initializers = []
        for path in used_params:
            array = to_numpy(params[path].array)
            if export_params:
                initializers.append(numpy_helper.from_array(array, path))
            else:
                graph_inputs.append(_value_info(path, array.dtype, array.shape))
        initializers.extend(context.initializers)
        graph = helper.make_graph(
            nodes, graph_name, graph_inputs, graph_outputs, initializer=initializers
        )
        return graph, out_names

    def _walk(self, out_nodes):
        """The recorded functions the outputs depend on, in the order applied, and the values."""
        seen = {}
        values = {}
        stack = [n for n in out_nodes if n is not None]
        for node in stack:
            var = node._variable() if node._variable is not None else None
            if var is not None:
                values[id(node)] = var.array
        while stack:
            node = stack.pop()
            func = node.creator_node
            if func is None or id(func) in seen:
                continue
            record = self.records.get(id(func))
            if record is None:
                raise RuntimeError(
                    f"export: {func.label} was applied before export began; pass the inputs "
                    "as arrays or as Variables that no function produced"
                )
            seen[id(func)] = record
            for x, array in zip(func.inputs, record[2]):
                values.setdefault(id(x), array)
                stack.append(x)
        ordered = sorted(seen.values(), key=lambda r: r[0])
        return [r[1] for r in ordered], values

    def _converter(self, func):
        for name in function_name(func):
            if name in self.converters:
                return self.converters[name]
        return None

    def _check_converters(self, functions, kinds):
        live = set(kinds)
        missing = {}
        for func in _reached(functions, live):
            if self._converter(func) is None:
                cls = type(func)
                missing.setdefault(func.label, f"{cls.__module__}.{cls.__qualname__}")
        if missing:
            listed = "; ".join(f"{label} (FunctionNode {cls})" for label, cls in missing.items())
            first = next(iter(missing))
            raise UnsupportedFunctionError(
                f"export: no ONNX converter for {listed}. Pass one as "
                f"external_converters={{{first!r}: converter}}, where converter(params) takes "
                "a dbr.onnx.FunctionConverterParams and returns ONNX nodes"
            )
