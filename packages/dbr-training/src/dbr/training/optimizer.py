"""Optimizer machinery: hyperparameters, per-parameter update rules, optimizer base classes.

The API follows Chainer v7's ``chainer.optimizer``: a :class:`GradientMethod`
gives each parameter of its target link an :class:`UpdateRule` whose
:class:`Hyperparameter` falls back to the optimizer's, so that a learning rate
can be changed for the whole model or for one parameter. Mixed precision is
supported through :meth:`UpdateRule.use_fp32_update` (a float32 master copy of
a float16 parameter) and :meth:`Optimizer.loss_scaling` (static or dynamic).
"""

import collections
import functools
import math
import numbers
import warnings

import numpy

from dbr.core import Link, Parameter, Variable, backend, initializers
from dbr.core.serializers import Deserializer

_ndarray = numpy.ndarray
_float16 = numpy.dtype(numpy.float16)

# One launch per GPU gradient, all writing to one flag array per device.
_NONFINITE_FLAG_ELEMENTWISE = {
    "in_params": "T grad, int32 index",
    "out_params": "raw int32 flags",
    "operation": "if (!isfinite(grad)) flags[index] = 1",
    "name": "dbr_flag_nonfinite",
    "no_return": True,
}


def _gpu_kernel(kind, definition):
    from dbr.gpu.kernels import from_definition

    return from_definition(definition, kind)


def gpu_elementwise(definition):
    """Return the ``cupy.ElementwiseKernel`` of a ``*_ELEMENTWISE`` definition, built once.

    dbr.gpu is imported here, on the first call, so that CPU training never
    imports it. Only the GPU code paths of dbr.training call this.

    Args:
        definition (dict): the keyword arguments of ``dbr.gpu.elementwise``
            (a module-level constant).
    """
    return _gpu_kernel("elementwise", definition)


def gpu_reduction(definition):
    """Return the ``cupy.ReductionKernel`` of a ``*_REDUCTION`` definition, built once.

    Args:
        definition (dict): the keyword arguments of ``dbr.gpu.reduce``.
    """
    return _gpu_kernel("reduce", definition)


def check_eps(rule, eps, dtype):
    """Raise ValueError when ``eps`` is nonzero but rounds to 0 in ``dtype`` (host only)."""
    if eps != 0 and numpy.dtype(dtype).type(eps) == 0:
        raise ValueError(
            f"{type(rule).__name__}: eps={eps!r} is too small for {numpy.dtype(dtype).name}"
        )


def _nonfinite_grad_names(named_params):
    """Names, in order, of the parameters whose gradient holds a NaN or an infinity.

    NumPy gradients are checked one by one. GPU gradients set flags on their
    device (one kernel each) that are read back once per device: a single
    synchronisation for a model on one GPU.
    """
    order, bad, on_gpu = [], set(), {}
    for name, param in named_params:
        grad = param.grad
        if grad is None:
            continue
        order.append(name)
        if type(grad) is _ndarray:
            if not numpy.isfinite(grad).all():
                bad.add(name)
        else:
            on_gpu.setdefault(param.device, []).append((name, grad))
    for device, entries in on_gpu.items():
        with device:
            flags = device.xp.zeros(len(entries), dtype=numpy.int32)
            kernel = gpu_elementwise(_NONFINITE_FLAG_ELEMENTWISE)
            for index, (_, grad) in enumerate(entries):
                kernel(grad, index, flags)
            flags = flags.get()
        bad.update(name for (name, _), flag in zip(entries, flags, strict=True) if flag)
    return [name for name in order if name in bad]


def _param_dtype(param):
    """The dtype of ``param``, or None for an uninitialised one whose dtype is not decided."""
    try:
        return param.dtype
    except RuntimeError:
        return None


def cpu_update_handles_0dim(update_core_cpu):
    """Let an ``update_core_cpu`` written with ``out=`` temporaries update 0-dim parameters.

    NumPy turns arithmetic on 0-dim arrays into scalars, which cannot take
    ``out=``. For a 0-dim parameter the decorated method is given a Variable
    holding one-element views of the parameter's array and gradient, and sees
    one-element views of its state arrays, so that its in-place updates land in
    the parameter and the state. The method must update arrays in place (never
    rebind ``param.array`` or a state entry), as the built-in rules do.
    """

    @functools.wraps(update_core_cpu)
    def update(self, param):
        array = param.array
        if array is None or array.ndim:
            return update_core_cpu(self, param)
        grad = param.grad
        view = Variable(array.reshape(1), name=param.name)
        if grad is not None:
            view.grad = grad.reshape(1)
        state = self._state
        if state is not None:
            self._state = {
                key: value.reshape(1) if type(value) is _ndarray and value.ndim == 0 else value
                for key, value in state.items()
            }
        try:
            return update_core_cpu(self, view)
        finally:
            self._state = state

    return update


def grad_or_none(param):
    """The gradient an update rule applies to ``param``: None when there is none to apply.

    As in Chainer, :meth:`UpdateRule.update` calls :meth:`UpdateRule.update_core`
    also for a parameter not yet initialised, whose gradient may not be
    readable; the built-in rules read the gradient through this function and
    leave such a parameter (or one without a gradient) unchanged.
    """
    if param.array is None:
        return None
    return param.grad


def grad_loss_scale(rule, param):
    """The loss scale still multiplying ``param.grad`` when a hook is called, or None.

    An optimizer's hooks run before the update rules divide the gradients by
    the loss scale of the last backward (:attr:`dbr.core.Variable.loss_scale`);
    a rule's own hooks run after. A hook adding a penalty's gradient (weight
    decay, lasso) multiplies it by this factor.

    Args:
        rule (UpdateRule): the rule the hook was called with (may be None).
        param (dbr.core.Variable): the parameter the hook was called with.
    """
    if getattr(rule, "_grad_unscaled", False):
        return None
    return param.loss_scale


class Hyperparameter:
    """A set of hyperparameters whose missing entries are looked up in a parent.

    An update rule's hyperparameter has the optimizer's as its parent: setting
    ``optimizer.hyperparam.lr`` changes every rule, setting
    ``param.update_rule.hyperparam.lr`` overrides it for one parameter.

    Every entry must be a real number: a Python or NumPy int, float or bool, or a 0-d
    numeric array; anything else (such as the string ``'0.1'``) raises a TypeError
    naming the optimizer or update rule, the entry and the value.

    Args:
        parent (Hyperparameter): where entries not set here are read from
            (default None: no fallback).
    """

    def __init__(self, parent=None):
        self._parent = parent
        self._owner = "Hyperparameter"

    def __setattr__(self, name, value):
        if not name.startswith("_") and not _is_real_number(value):
            owner = self.__dict__.get("_owner", "Hyperparameter")
            raise TypeError(
                f"{owner}: expected {name} to be a real number, got "
                f"{type(value).__name__} {value!r}"
            )
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        if "_parent" not in self.__dict__:
            raise AttributeError(f"Hyperparameter: {name!r} is not set")
        parent = self._parent
        if parent is None:
            raise AttributeError(f"Hyperparameter: {name!r} is not set")
        return getattr(parent, name)

    def __repr__(self):
        items = sorted(self.get_dict().items())
        return "Hyperparameter({})".format(", ".join(f"{k}={v}" for k, v in items))

    @property
    def parent(self):
        """The parent Hyperparameter (or None)."""
        return self._parent

    def get_dict(self):
        """Return a dict of every entry visible here (the parent's, overridden by this one's)."""
        d = {} if self._parent is None else self._parent.get_dict()
        for k, v in self.__dict__.items():
            if not k.startswith("_"):
                d[k] = v
        return d


def _is_real_number(value):
    if isinstance(value, numbers.Real):
        return True
    dtype = getattr(value, "dtype", None)
    return getattr(value, "ndim", None) == 0 and getattr(dtype, "kind", None) in (
        "b",
        "i",
        "u",
        "f",
    )


class HyperparameterProxy:
    """A property of an optimizer aliasing one entry of its ``hyperparam`` (``optimizer.lr``).

    Args:
        attr_name (str): the hyperparameter entry it reads and writes.
    """

    def __init__(self, attr_name):
        self._attr_name = attr_name
        self.__doc__ = f"Alias of ``self.hyperparam.{attr_name}``."

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj.hyperparam, self._attr_name)

    def __set__(self, obj, value):
        setattr(obj.hyperparam, self._attr_name, value)


def _check_timing(who, timing, allowed=("pre", "post", "auto")):
    if timing not in allowed:
        raise ValueError(f"{who}: timing must be one of {allowed}, got {timing!r}")


def _hook_name(who, hook, name):
    if name is None:
        name = getattr(hook, "name", None) or getattr(hook, "__name__", None)
        if name is None:
            raise ValueError(f"{who}: the hook {hook!r} has no name; pass name=")
    return name


def _register_hook(owner, hook, name, timing, *, warn_without_timing):
    """Put ``hook`` into the pre- or post-update table of ``owner`` (a rule or optimizer).

    With timing 'auto' the hook's own ``timing`` decides; when it is invalid,
    'pre' is used with a warning. When it is missing, 'pre' is used, with a
    warning if ``warn_without_timing`` (the optimizer's behaviour; a rule's
    hooks are plain functions that rarely carry one). A name already
    registered is a KeyError, as in Chainer.
    """
    who = f"{type(owner).__name__}.add_hook"
    pre, post = owner._pre_update_hooks, owner._post_update_hooks
    if not callable(hook):
        raise TypeError(f"{who}: hook must be callable, got {type(hook).__name__}")
    _check_timing(who, timing)
    if timing == "auto":
        timing = getattr(hook, "timing", None)
        if timing is None and not warn_without_timing:
            timing = "pre"
        elif timing not in ("pre", "post"):
            warnings.warn(
                f"{who}: the hook's timing attribute is {timing!r}, not 'pre' or 'post'; "
                "using 'pre'",
                stacklevel=3,
            )
            timing = "pre"
    name = _hook_name(who, hook, name)
    if name in pre or name in post:
        raise KeyError(f"{who}: a hook named {name!r} already exists")
    (pre if timing == "pre" else post)[name] = hook


def _unregister_hook(owner, name):
    pre, post = owner._pre_update_hooks, owner._post_update_hooks
    if name in pre:
        del pre[name]
    elif name in post:
        del post[name]
    else:
        raise KeyError(f"{type(owner).__name__}.remove_hook: no hook named {name!r}")


class UpdateRule:
    """The rule updating one parameter from its gradient (base of every optimizer's rule).

    A rule keeps its own :class:`Hyperparameter` (whose parent is the
    optimizer's), an ``enabled`` flag, the number ``t`` of updates it made,
    and its ``state`` (a dict of arrays such as moment estimates), created by
    :meth:`init_state` on the parameter's device at the first update. As in
    Chainer, the state follows the parameter: an
    update after the parameter moved (``link.to_device(...)`` once the state
    exists) first sends the state to the parameter's device.
    Subclasses implement :meth:`init_state` and :meth:`update_core_cpu` /
    :meth:`update_core_gpu` (the built-in rules' GPU update is one fused
    elementwise kernel per parameter), updating ``param.array`` and the state
    in place.

    Args:
        parent_hyperparam (Hyperparameter): the defaults (default None).

    Attributes:
        enabled (bool): when False, :meth:`update` does nothing.
        hyperparam (Hyperparameter): this rule's hyperparameters.
        t (int): the number of updates made.
    """

    def __init__(self, parent_hyperparam=None):
        self._pre_update_hooks = collections.OrderedDict()
        self._post_update_hooks = collections.OrderedDict()
        self._state = None
        # The device the state arrays live on; None after a load (not known yet).
        self._state_device = None
        self.enabled = True
        self.hyperparam = Hyperparameter(parent_hyperparam)
        self.hyperparam._owner = type(self).__name__
        self.t = 0
        self._use_fp32_update = False
        self._fp32_param = None
        # True while update() runs: the gradient its hooks see is divided by the loss scale.
        self._grad_unscaled = False

    def _set_hyperparams(self, **values):
        """Override, on this rule only, each hyperparameter given a value other than None."""
        hp = self.hyperparam
        for name, value in values.items():
            if value is not None:
                setattr(hp, name, value)

    @property
    def state(self):
        """The state dict (None until the first update or a load)."""
        return self._state

    def add_hook(self, hook, name=None, timing="auto"):
        """Register ``hook(rule, param)``, called before or after each update of the parameter.

        Args:
            hook (callable): the hook.
            name (str): its name (default: ``hook.name`` or ``hook.__name__``).
            timing (str): 'pre', 'post' or 'auto' (default; ``hook.timing``,
                else 'pre'; an invalid ``hook.timing`` warns and uses 'pre').

        Raises:
            KeyError: a hook of that name is already registered.
        """
        _register_hook(self, hook, name, timing, warn_without_timing=False)

    def remove_hook(self, name):
        """Remove the hook registered as ``name`` (KeyError if there is none)."""
        _unregister_hook(self, name)

    def update(self, param):
        """Update ``param``: state creation, loss-scale division, hooks, :meth:`update_core`.

        Does nothing when the rule is disabled. Otherwise ``t`` is counted and,
        as in Chainer, the hooks and :meth:`update_core` are called even for a
        parameter without a gradient or not yet initialised (the built-in
        rules then leave it unchanged); the state is created, and the gradient
        divided by the loss scale, only once the parameter is initialised.
        """
        if not self.enabled:
            return
        self.t += 1
        target = param
        if self._use_fp32_update and _param_dtype(param) == _float16:
            target = self._fp32_master(param)
        if target.array is not None:
            self._prepare(target)
            loss_scale = param.loss_scale
            if loss_scale is not None and target.grad is not None:
                target.grad /= loss_scale
        self._grad_unscaled = True
        try:
            if self._pre_update_hooks:
                for hook in self._pre_update_hooks.values():
                    hook(self, target)
            self.update_core(target)
            if self._post_update_hooks:
                for hook in self._post_update_hooks.values():
                    hook(self, target)
        finally:
            self._grad_unscaled = False
        if target is not param:
            if param.array is not None:
                backend.get_array_module(param.array).copyto(
                    param.array, target.array, casting="same_kind"
                )
            target.grad = None

    def _fp32_master(self, param):
        """The float32 master copy of the float16 ``param``, its gradient set from param's."""
        master = self._fp32_param
        if param.array is None:
            if master is None:
                master = Parameter(initializers.NaN(numpy.float32), name=param.name)
                self._fp32_param = master
            return master
        if master is None or master.array is None:
            master = Variable(param.array.astype(numpy.float32), name=param.name)
            self._fp32_param = master
        grad = param.grad
        master.grad = None if grad is None else grad.astype(numpy.float32)
        return master

    def _prepare(self, param):
        # The state follows the parameter's device, as in Chainer: a link moved by
        # to_device after its state exists, or state just loaded, is sent before use.
        device = param.device
        state_device = self._state_device
        if self._state is None:
            self._state = {}
            with device:
                self.init_state(param)
        elif device is not state_device and device != state_device:
            state = self._state
            for key, value in state.items():
                if isinstance(value, backend.get_array_types()):
                    state[key] = device.send(value)
        self._state_device = device

    def update_core(self, param):
        """Update ``param`` in place through :meth:`update_core_cpu` or :meth:`update_core_gpu`.

        The choice follows the parameter's array (its device when the
        parameter is not initialised).
        """
        array = param.array
        if type(array) is _ndarray or (array is None and param.device.xp is numpy):
            self.update_core_cpu(param)
        else:
            with param.device:
                self.update_core_gpu(param)

    def update_core_cpu(self, param):
        """Update a parameter held in a NumPy array (implemented by subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement update_core_cpu")

    def update_core_gpu(self, param):
        """Update a parameter held in a GPU array (implemented by subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement update_core_gpu")

    def update_core_chainerx(self, param):
        """Chainer's update of a ChainerX parameter; dbr has no ChainerX arrays.

        :meth:`update_core` never calls it. It is kept so that rules written
        for Chainer (which override or wrap it) still work; called directly,
        it updates ``param`` as :meth:`update_core` does.
        """
        UpdateRule.update_core(self, param)

    def init_state(self, param):
        """Fill :attr:`state` with the arrays this rule keeps for ``param`` (none by default)."""

    def _state_keys(self):
        saved = self._state
        self._state = {}
        try:
            arr = numpy.empty(1, dtype=numpy.float32)
            self.init_state(Variable(arr, grad=arr))
            return list(self._state)
        finally:
            self._state = saved

    def serialize(self, serializer):
        """Save or load ``t`` and every state array.

        Loading into a rule whose state does not exist yet creates it from
        the stored arrays (moved to the parameter's device at the next
        update), so that a fresh optimizer continues a saved one. A disabled
        rule whose state is missing from the source keeps no state.
        """
        self.t = serializer("t", self.t)
        state = self._state
        if state is not None:
            for key in state:
                state[key] = serializer(key, state[key])
            if isinstance(serializer, Deserializer) and not serializer.dry_run:
                self._state_device = None
            return
        if not isinstance(serializer, Deserializer):
            return
        loaded = {}
        for key in self._state_keys():
            try:
                loaded[key] = serializer(key, None)
            except KeyError:
                # A disabled rule never updates: a snapshot may lack its state.
                if self.enabled:
                    raise
                return
        if serializer.dry_run or any(value is None for value in loaded.values()):
            return
        self._state = loaded
        self._state_device = None

    def _serialize_master(self, serializer, param):
        # The float32 master copy is saved beside the rule's own state keys so
        # that a resumed float16 run continues bit for bit.
        if not (self._use_fp32_update and param.array is not None and param.dtype == _float16):
            return
        master = self._fp32_param
        if master is not None:
            master.array = serializer("master", master.array)
            return
        if isinstance(serializer, Deserializer):
            value = serializer("master", None)
            if value is not None and not serializer.dry_run:
                value = param.device.send(numpy.asarray(value, dtype=numpy.float32))
                self._fp32_param = Variable(value, name=param.name)

    def use_fp32_update(self, flag=True):
        """Update float16 parameters through a float32 master copy (default True).

        The gradient is cast to float32, the update is done on the master
        copy (whose state is float32 too), and the result is cast back into
        the float16 parameter.
        """
        self._use_fp32_update = flag


class Optimizer:
    """Base class of optimizers: the target link, the counters, hooks and loss scaling.

    Attributes:
        target (dbr.core.Link): the link being optimized (set by :meth:`setup`).
        t (int): the number of update steps.
        epoch (int): the current epoch (incremented by :meth:`new_epoch`).
        use_auto_new_epoch (bool): True when an updater calls
            :meth:`new_epoch` itself.
    """

    target = None
    t = 0
    epoch = 0
    _pre_update_hooks = None
    _post_update_hooks = None
    _loss_scale = None
    _loss_scale_max = 65504
    _loss_scaling_is_dynamic = False
    _loss_scaling_isnan = False
    _loss_scaling_isnan_ever = False
    _loss_scaling_multiplier = None
    use_auto_new_epoch = False

    def _require_setup(self, method):
        if self.target is None:
            raise RuntimeError(
                f"{type(self).__name__}.{method}: the optimizer has no target; "
                "call setup(link) first"
            )

    @property
    def _hooks(self):
        hooks = collections.OrderedDict()
        if self._pre_update_hooks is not None:
            hooks.update(self._pre_update_hooks)
            hooks.update(self._post_update_hooks)
        return hooks

    def setup(self, link):
        """Make ``link`` the target, reset ``t``, ``epoch`` and hooks; return the optimizer."""
        if not isinstance(link, Link):
            raise TypeError(
                f"{type(self).__name__}.setup: optimization target must be a link: "
                f"expected a dbr.core.Link, got {type(link).__name__}"
            )
        self.target = link
        self.t = 0
        self.epoch = 0
        self._pre_update_hooks = collections.OrderedDict()
        self._post_update_hooks = collections.OrderedDict()
        return self

    def update(self, lossfun=None, *args, **kwds):
        """Update the parameters (gradients from ``lossfun(*args, **kwds)`` if given)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement update")

    def new_epoch(self, auto=False):
        """Increment :attr:`epoch`.

        Args:
            auto (bool): True when called by an updater, which must have set
                :attr:`use_auto_new_epoch`; calling it both ways is an error.
        """
        name = type(self).__name__
        if auto and not self.use_auto_new_epoch:
            raise RuntimeError(
                f"{name}.new_epoch: invalid call with auto=True; the updater must set "
                "optimizer.use_auto_new_epoch = True"
            )
        if not auto and self.use_auto_new_epoch:
            raise RuntimeError(
                f"{name}.new_epoch: duplicated new_epoch with the updater; pass "
                "auto_new_epoch=False to the updater or stop calling new_epoch yourself"
            )
        self.epoch += 1

    def add_hook(self, hook, name=None, timing="auto"):
        """Register a hook called at every update.

        Args:
            hook (callable): called as ``hook(optimizer)``, or, when
                ``hook.call_for_each_param`` is true, as ``hook(rule, param)``
                for every parameter.
            name (str): the registration name (default ``hook.name``); a
                name already registered is a KeyError.
            timing (str): 'pre' (before the update), 'post' (after it) or
                'auto' (default: ``hook.timing``, else 'pre' with a warning).
        """
        self._require_setup("add_hook")
        _register_hook(self, hook, name, timing, warn_without_timing=True)

    def remove_hook(self, name):
        """Remove the hook registered as ``name`` (KeyError if there is none)."""
        self._require_setup("remove_hook")
        _unregister_hook(self, name)

    def call_hooks(self, timing="pre"):
        """Call the hooks registered for ``timing`` ('pre' or 'post') in registration order."""
        _check_timing(f"{type(self).__name__}.call_hooks", timing, ("pre", "post"))
        self._require_setup("call_hooks")
        hooks = self._pre_update_hooks if timing == "pre" else self._post_update_hooks
        for hook in list(hooks.values()):
            self._call_hook(hook)

    def _call_hook(self, hook):
        if getattr(hook, "call_for_each_param", False):
            for param in self.target.params():
                hook(param.update_rule, param)
        else:
            hook(self)

    def serialize(self, serializer):
        """Save or load ``t``, ``epoch``, each parameter's update rule and serializable hooks.

        Each rule is stored under its parameter's path (``'l1/W/...'``). The
        target's parameters themselves are not stored here.
        """
        self._require_setup("serialize")
        self.t = serializer("t", self.t)
        self.epoch = serializer("epoch", self.epoch)
        for name, param in self.target.namedparams():
            rule = param.update_rule
            if rule is not None:
                child = serializer[name]
                rule.serialize(child)
                rule._serialize_master(child, param)
        for name, hook in self._hooks.items():
            serialize = getattr(hook, "serialize", None)
            if serialize is not None:
                serialize(serializer["hooks"][name])

    def loss_scaling(self, interval=1000, scale=None):
        """Configure loss scaling.

        Args:
            interval (int): dynamic scaling only: after the first overflow,
                the scale grows by ``2 ** (1 / interval)`` per clean step, so
                it doubles every ``interval`` clean steps (before the first
                overflow it doubles every step). Default 1000.
            scale (float): a static scale; None (default) selects dynamic
                scaling, which starts at 1, halves and skips the step when a
                gradient is not finite, and stays within [1, 65504].
        """
        who = f"{type(self).__name__}.loss_scaling"
        if scale is None:
            if interval < 1:
                raise ValueError(f"{who}: interval must be >= 1, got {interval!r}")
            self._loss_scaling_is_dynamic = True
            self._loss_scale = 1.0
            self._loss_scaling_multiplier = math.pow(2.0, 1.0 / interval)
            self._loss_scaling_isnan_ever = False
        else:
            if not scale > 0:
                raise ValueError(f"{who}: scale must be a positive number, got {scale!r}")
            self._loss_scaling_is_dynamic = False
            self._loss_scale = scale

    def set_loss_scale(self, loss_scale):
        """Use the static loss scale ``loss_scale``."""
        self.loss_scaling(scale=loss_scale)

    def check_nan_in_grads(self):
        """Record (and warn) whether any gradient is not finite; only with dynamic scaling.

        On a GPU this costs one flagging kernel per gradient and one
        synchronisation per device.
        """
        self._loss_scaling_isnan = False
        if not self._loss_scaling_is_dynamic:
            return
        for name in _nonfinite_grad_names(self.target.namedparams(False)):
            self._loss_scaling_isnan = True
            self._loss_scaling_isnan_ever = True
            warnings.warn(
                f"{type(self).__name__}: non-finite value in the gradient of {name} "
                f"(iteration {self.t}, loss scale {self._loss_scale})",
                stacklevel=2,
            )

    def is_safe_to_update(self):
        """Whether the last :meth:`check_nan_in_grads` found only finite gradients."""
        return not self._loss_scaling_isnan

    def update_loss_scale(self):
        """Adjust the dynamic loss scale after a step (halve on overflow, grow otherwise)."""
        if not self._loss_scaling_is_dynamic:
            return
        if self._loss_scaling_isnan:
            multiplier = 0.5
        elif self._loss_scaling_isnan_ever:
            multiplier = self._loss_scaling_multiplier
        else:
            multiplier = 2.0
        self._loss_scale = max(1, min(self._loss_scale_max, self._loss_scale * multiplier))


class GradientMethod(Optimizer):
    """Base class of first-order optimizers, updating each parameter through its own rule.

    Subclasses implement :meth:`create_update_rule`; their hyperparameters
    live in :attr:`hyperparam` (the parent of every rule's). :meth:`call_hooks`
    reallocates cleared gradients after each hook.

    Attributes:
        hyperparam (Hyperparameter): the optimizer-wide hyperparameters.
    """

    def __init__(self):
        super().__init__()
        self.hyperparam = Hyperparameter()
        self.hyperparam._owner = type(self).__name__
        self._use_fp32_update = False

    def setup(self, link):
        """Set the target and give every parameter (initialised or not) a new update rule."""
        super().setup(link)
        fp32 = self._use_fp32_update
        for param in link.params():
            rule = self.create_update_rule()
            if fp32:
                rule.use_fp32_update()
            param.update_rule = rule
        return self

    def create_update_rule(self):
        """Return a new update rule for one parameter (implemented by subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement create_update_rule")

    def reallocate_cleared_grads(self):
        """Give every initialised parameter whose gradient is None a zero gradient."""
        for param in self.target.params(False):
            if param.grad is None:
                with param.device:
                    param.grad = param.xp.zeros_like(param.array)

    def _call_hook(self, hook):
        # As in Chainer, parameters left without a gradient get zeros after each hook.
        super()._call_hook(hook)
        self.reallocate_cleared_grads()

    def update(self, lossfun=None, *args, **kwds):
        """Update every parameter from its gradient.

        With ``lossfun``, the loss ``lossfun(*args, **kwds)`` is computed, the
        gradients cleared, and ``loss.backward(loss_scale=...)`` run first.
        Then: cleared gradients are reallocated, 'pre' hooks run, ``t`` is
        incremented, each parameter is updated (skipped when dynamic loss
        scaling found a non-finite gradient), 'post' hooks run and the loss
        scale is adjusted.
        """
        self._require_setup("update")
        if lossfun is not None:
            loss = lossfun(*args, **kwds)
            if getattr(self, "_use_cleargrads", True):
                self.target.cleargrads()
            else:
                self.target.zerograds()
            loss.backward(loss_scale=self._loss_scale)
            del loss
        self.reallocate_cleared_grads()
        self.check_nan_in_grads()
        if self._pre_update_hooks:
            self.call_hooks("pre")
        self.t += 1
        if not self._loss_scaling_isnan:
            for param in self.target.params():
                rule = param.update_rule
                if rule is not None:
                    rule.update(param)
        self.reallocate_cleared_grads()
        if self._post_update_hooks:
            self.call_hooks("post")
        if self._loss_scaling_is_dynamic:
            self.update_loss_scale()

    def use_cleargrads(self, use=True):
        """Deprecated: use ``cleargrads`` (True, default) or ``zerograds`` in :meth:`update`."""
        warnings.warn(
            f"{type(self).__name__}.use_cleargrads is deprecated", DeprecationWarning, stacklevel=2
        )
        self._use_cleargrads = use

    def use_fp32_update(self, flag=True):
        """Update float16 parameters through float32 master copies (every rule; default True)."""
        self._use_fp32_update = flag
        if self.target is not None:
            for param in self.target.params():
                if param.update_rule is not None:
                    param.update_rule.use_fp32_update(flag)
