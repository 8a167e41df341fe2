"""Link, Chain and ChainList: the building blocks of models.

A :class:`Link` owns :class:`~dbr.core.Parameter` objects and *persistent
values* (arrays or scalars saved with the model but not trained, such as
running statistics). A :class:`Chain` holds child links by name and a
:class:`ChainList` by position, so that a whole model is a tree of links whose
parameters are reached by paths such as ``'/l1/W'``.

Parameters and children are registered by assignment inside
:meth:`Link.init_scope`; outside it an assignment makes a plain attribute.
"""

import contextlib
import copy
import inspect
import warnings
from collections.abc import MutableSequence

import numpy

from dbr.core import backend, initializers
from dbr.core.configuration import config
from dbr.core.device_resident import DeviceResident
from dbr.core.link_hook import (
    LinkHook,
    _ForwardPostprocessCallbackArgs,
    _ForwardPreprocessCallbackArgs,
    _global_hook_count,
)
from dbr.core.serializers.base import _serialize_parameter
from dbr.core.variable import Parameter

__all__ = ["Link", "Chain", "ChainList"]

_COPY_MODES = ("init", "copy", "share")
_INIT_NOT_CALLED = object()


class _NoForward(NotImplementedError, AttributeError):
    """A link called without forward: NotImplementedError, and Chainer's AttributeError."""


def _check_init_called(link):
    if link._local_link_hooks is _INIT_NOT_CALLED:
        raise RuntimeError("Link.__init__() has not been called.")


def _check_copy_mode(who, mode):
    if mode not in _COPY_MODES:
        raise ValueError(f"{who}: expected mode 'init', 'copy' or 'share', got {mode!r}")


def _is_shape(value):
    if value is None or isinstance(value, (int, numpy.integer)):
        return True
    return isinstance(value, (tuple, list)) and all(
        isinstance(v, (int, numpy.integer)) for v in value
    )


def _share_param(param):
    """A new Parameter object that shares ``param``'s array, with no gradient."""
    new = copy.copy(param)
    new.grad = None
    return new


def _copy_param_data(dst, src, dst_device, src_device):
    """Copy the array of Parameter ``src`` into ``dst``, initialising either if needed."""
    src_array = src.array
    if src_array is None:
        if dst.array is None:
            return
        # As in Chainer, an uninitialized source is initialised (with the
        # destination's shape) so that both end up holding the same values.
        src.initialize(dst.shape, device=src_device)
        src_array = src.array
    if dst.array is None:
        dst.initialize(src_array.shape, device=dst_device)
    backend.copyto(dst.array, src_array)


def _format_children(cls_name, entries):
    """Chainer's nested layout: ``Cls(\\n  (key): child,\\n)``, or ``Cls()`` when empty."""
    lines = []
    for key, text in entries:
        for line in f"({key}): {text},".splitlines():
            lines.append(f"  {line}\n")
    body = "".join(lines)
    return f"{cls_name}(\n{body})" if body else f"{cls_name}()"


def _layer_text(layer):
    """How a child or a layer prints inside its parent."""
    if isinstance(layer, Link):
        return str(layer)
    if getattr(layer, "__name__", None) == "<lambda>":
        try:
            return inspect.getsource(layer).strip().rstrip(",")
        except (OSError, TypeError):
            return repr(layer)
    return str(layer)


def _warn_deprecated_transfer(link, method, device):
    warnings.warn(
        f"{type(link).__name__}.{method} is deprecated; use to_device({device!r}) instead",
        DeprecationWarning,
        stacklevel=3,
    )


class Link(DeviceResident):
    """A building block of models that owns parameters and persistent values.

    A :class:`~dbr.core.DeviceResident` whose own
    :meth:`to_device` moves its parameters, array persistents and children.

    Assigning a :class:`~dbr.core.Parameter` to an attribute inside
    ``with link.init_scope():`` registers it as a parameter of the link;
    :meth:`add_persistent` and :meth:`register_persistent` register values
    that are saved and loaded by :meth:`serialize` but not trained. Calling
    the link runs :meth:`forward`, which subclasses implement.

    Args:
        **params: (old style) parameters to create, each given by its shape,
            or by a ``(shape, dtype)`` pair; a shape of None leaves the
            parameter uninitialized. Assign Parameters in :meth:`init_scope`
            instead in new code.

    Attributes:
        name (str or None): the name given by the parent Chain (``'0'``,
            ``'1'``, ... in a ChainList), None for a root link.

    >>> import numpy
    >>> from dbr.core import Link, Parameter
    >>> class Scale(Link):
    ...     def __init__(self, size):
    ...         super().__init__()
    ...         with self.init_scope():
    ...             self.a = Parameter(numpy.ones(size, numpy.float32))
    ...     def forward(self, x):
    ...         return x * self.a
    >>> [path for path, _ in Scale(3).namedparams()]
    ['/a']
    """

    _within_init_scope = False
    _device = backend.cpu
    # Until Link.__init__ runs, a marker: calling a link whose subclass forgot to call
    # Link.__init__ fails on the hooks' slow path, at no cost to the fast one.
    _local_link_hooks = _INIT_NOT_CALLED

    def __init__(self, **params):
        self._local_link_hooks = None
        self._params = set()
        self._persistent = set()
        self.name = None
        for name, value in params.items():
            if _is_shape(value):
                shape, dtype = value, numpy.float32
            elif isinstance(value, (tuple, list)) and len(value) == 2 and _is_shape(value[0]):
                shape, dtype = value
            else:
                raise TypeError(
                    f"Link: expected parameter {name!r} to be given by a shape or a "
                    f"(shape, dtype) pair, got {value!r}"
                )
            self.add_param(name, shape, dtype=dtype)

    # -- calling ----------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """Run :meth:`forward` on the arguments, between the link hooks' callbacks.

        The hooks are the thread's global ones (``with hook:``) then this
        link's :attr:`local_link_hooks`; with none, this is ``forward`` alone.
        """
        local_hooks = self._local_link_hooks
        if not _global_hook_count[0] and not local_hooks:
            return self.forward(*args, **kwargs)
        _check_init_called(self)
        hooks = config._link_hooks
        if local_hooks:
            hooks = {**hooks, **local_hooks}
        if not hooks:
            return self.forward(*args, **kwargs)
        hooks = tuple(hooks.values())
        pre = _ForwardPreprocessCallbackArgs(self, "forward", args, kwargs)
        for hook in hooks:
            hook.forward_preprocess(pre)
        out = self.forward(*args, **kwargs)
        post = _ForwardPostprocessCallbackArgs(self, "forward", args, kwargs, out)
        for hook in hooks:
            hook.forward_postprocess(post)
        return out

    def forward(self, *args, **kwargs):
        """Compute the output of the link; subclasses implement it (``link(x)`` calls it).

        A subclass without ``forward`` whose bases after Link define ``__call__``
        (a mixin, as Chainer allows) is called through that ``__call__``.
        """
        mro = type(self).__mro__
        for base in mro[mro.index(Link) + 1 :]:
            call = vars(base).get("__call__")
            if call is not None:
                get = getattr(type(call), "__get__", None)  # bind it as attribute lookup would
                return (call if get is None else get(call, self, type(self)))(*args, **kwargs)
        raise _NoForward(
            f"{type(self).__name__}.forward: the link is called but its class implements "
            "neither forward nor __call__"
        )

    # -- link hooks -------------------------------------------------------------
    @property
    def local_link_hooks(self):
        """The hooks registered on this link alone (name → LinkHook), in registration order.

        Unlike the hooks registered globally with ``with hook:``, these apply to
        calls of this link only; :meth:`add_hook` and :meth:`delete_hook`
        change them.
        """
        _check_init_called(self)
        hooks = self._local_link_hooks
        if hooks is None:
            hooks = self._local_link_hooks = {}
        return hooks

    def add_hook(self, hook, name=None):
        """Register the :class:`~dbr.core.LinkHook` ``hook`` on this link, under ``name``.

        The hook's :meth:`~dbr.core.LinkHook.added` is called with this link.

        Args:
            hook (LinkHook): the hook.
            name (str or None): its key in :attr:`local_link_hooks`; None uses
                ``hook.name``.

        Returns:
            Link: this link, so that ``L.Linear(3, 4).add_hook(hook)`` is the link.

        Raises:
            TypeError: if ``hook`` is not a LinkHook.
            KeyError: if a hook of that name is already registered on the link.
        """
        if not isinstance(hook, LinkHook):
            raise TypeError(
                f"{type(self).__name__}.add_hook: expected hook to be a LinkHook, "
                f"got {type(hook).__name__}"
            )
        if name is None:
            name = hook.name
        hooks = self.local_link_hooks
        if name in hooks:
            raise KeyError(
                f"{type(self).__name__}.add_hook: a hook named {name!r} is already "
                f"registered on this link ({hooks[name]!r})"
            )
        hooks[name] = hook
        hook.added(self)
        return self

    def delete_hook(self, name):
        """Unregister the hook named ``name`` from this link; its ``deleted`` gets this link.

        Raises:
            KeyError: if no hook of that name is registered on the link.
        """
        hooks = self.local_link_hooks
        if name not in hooks:
            raise KeyError(
                f"{type(self).__name__}.delete_hook: no hook named {name!r} is registered "
                f"on this link (registered: {sorted(hooks)})"
            )
        hooks[name].deleted(self)
        del hooks[name]

    # -- registration ---------------------------------------------------------
    @property
    def within_init_scope(self):
        """True inside :meth:`init_scope`, where assignments register parameters and links."""
        return self._within_init_scope

    @contextlib.contextmanager
    def init_scope(self):
        """Context manager inside which assigned Parameters (and, in a Chain, Links) register.

        >>> from dbr.core import Link, Parameter
        >>> link = Link()
        >>> with link.init_scope():
        ...     link.W = Parameter(0.0, (2, 3))
        >>> link.W.shape
        (2, 3)
        """
        _check_init_called(self)
        old = self._within_init_scope
        self._within_init_scope = True
        try:
            yield
        finally:
            self._within_init_scope = old

    def __setattr__(self, name, value):
        if self._within_init_scope and isinstance(value, Parameter):
            value.name = name
            self._params.add(name)
            self._persistent.discard(name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self._params.discard(name)
        self._persistent.discard(name)
        object.__delattr__(self, name)

    def add_param(self, name, shape=None, dtype=numpy.float32, initializer=None):
        """Create and register a parameter named ``name``.

        Args:
            name (str): the attribute name of the parameter.
            shape (int or tuple of ints or None): its shape; None leaves it
                uninitialized until ``initialize(shape)`` is called.
            dtype: its dtype when ``initializer`` is None (float32 by default).
            initializer: an initializer, a scalar or an array used to fill it;
                None fills it with NaN. When given, ``dtype`` is ignored.
        """
        _check_init_called(self)
        if name in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__}.add_param: cannot register parameter "
                f"{name!r}: the attribute already exists"
            )
        if initializer is None:
            initializer = initializers.NaN(dtype)
        param = Parameter(initializer, shape)
        param.to_device(self._device)
        with self.init_scope():
            setattr(self, name, param)

    def add_persistent(self, name, value):
        """Register ``value`` as a persistent value, set as attribute ``name``.

        Persistent values are saved and loaded by :meth:`serialize` and moved by
        :meth:`to_device` (when they are arrays), but not updated by optimizers.
        """
        d = self.__dict__
        if name in d:
            raise AttributeError(
                f"{type(self).__name__}.add_persistent: cannot register "
                f"persistent value {name!r}: the attribute already exists"
            )
        self._persistent.add(name)
        self._params.discard(name)
        d[name] = value

    def register_persistent(self, name):
        """Register the existing attribute ``name`` as a persistent value.

        A parameter of that name stops being a parameter.
        """
        if not hasattr(self, name):
            raise AttributeError(
                f"{type(self).__name__}.register_persistent: cannot register "
                f"{name!r}: the link has no such attribute"
            )
        self._persistent.add(name)
        self._params.discard(name)

    # -- traversal --------------------------------------------------------------
    def params(self, include_uninit=True):
        """Yield every parameter of this link and its descendants.

        Args:
            include_uninit (bool): also yield parameters whose array is not yet
                created (lazily initialised ones).
        """
        d = self.__dict__
        for name in sorted(self._params):
            param = d[name]
            if include_uninit or param.array is not None:
                yield param

    def namedparams(self, include_uninit=True):
        """Yield ``(path, parameter)`` pairs, paths relative to this link (``'/l1/W'``).

        Args:
            include_uninit (bool): also yield uninitialized parameters.
        """
        d = self.__dict__
        for name in sorted(self._params):
            param = d[name]
            if include_uninit or param.array is not None:
                yield "/" + name, param

    def links(self, skipself=False):
        """Yield this link (unless ``skipself``) and every descendant link."""
        if not skipself:
            yield self

    def namedlinks(self, skipself=False):
        """Yield ``(path, link)`` pairs for this link (path ``'/'``) and its descendants."""
        if not skipself:
            yield "/", self

    def children(self):
        """Yield the direct child links (none for a plain Link)."""
        yield from ()

    def count_params(self):
        """The total number of scalars in the initialized parameters.

        Uninitialized parameters are left out of the count, with a warning
        naming each of them.
        """
        size = 0
        for path, param in self.namedparams():
            if param.array is None:
                warnings.warn(
                    f"{type(self).__name__}.count_params: parameter {path!r} is not "
                    "initialized yet, so the count leaves it out",
                    stacklevel=2,
                )
                continue
            size += param.size
        return size

    # -- gradients and copies ---------------------------------------------------
    def cleargrads(self):
        """Set the gradient of every parameter to None (do it before each backward)."""
        for param in self.params():
            param.cleargrad()

    def zerograds(self):
        """Set the gradient of every parameter to zeros (deprecated, as in Chainer).

        Use :meth:`cleargrads`, which is faster: backward then sets the gradients.
        """
        warnings.warn(
            "Link.zerograds is deprecated. Use Link.cleargrads instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        for param in self.params():
            param.zerograd()  # each warns too, as in Chainer

    def addgrads(self, link):
        """Add the gradients of ``link``'s parameters to those of this link's (same structure).

        Works across devices; a parameter of this link that is still
        uninitialized is first initialised with the shape of the source.
        """
        src = link.__dict__
        d = self.__dict__
        for name in self._params:
            dst, s = d[name], src[name]
            if s.grad is None:
                continue
            if dst.array is None:
                dst.initialize(s.shape, device=self._device)
            dst.addgrad(s)

    def copyparams(self, link, copy_persistent=True):
        """Copy the parameter arrays (not gradients) of ``link`` into this link's, in place.

        Args:
            link (Link): the source, with the same structure as this link.
            copy_persistent (bool): also copy the persistent values (arrays in
                place, other values by deep copy).
        """
        src = link.__dict__
        d = self.__dict__
        for name in self._params:
            _copy_param_data(d[name], src[name], self._device, link._device)
        if copy_persistent:
            array_types = backend.get_array_types()
            for name in self._persistent:
                dst, s = d[name], src[name]
                if isinstance(dst, array_types) and isinstance(s, array_types):
                    backend.copyto(dst, s)
                else:
                    d[name] = copy.deepcopy(s)

    def copy(self, mode="share"):
        """Copy the link hierarchy rooted at this link.

        As in Chainer, a shared copy's ``name`` is None (it is no child of
        anything yet) and a deep copy keeps the name.

        Args:
            mode (str): ``'share'``: new link and Parameter objects that share
                the arrays with this link (gradients are not shared);
                ``'copy'``: a deep copy, with the same values held in new arrays;
                ``'init'``: a deep copy whose initialized parameters are filled
                again by their initializers (uninitialized ones stay lazy).

        Returns:
            Link: the copy, of the same class.
        """
        _check_copy_mode(f"{type(self).__name__}.copy", mode)
        if mode == "share":
            ret = self._copy_shared()
            ret.name = None
        else:
            ret = copy.deepcopy(self)
            if mode == "init":
                for param in ret.params(include_uninit=False):
                    # As in Chainer, the re-initialized copy's gradient is NaN-filled.
                    param._grad_initializer = initializers.NaN(param.dtype)
                    param.initialize(param.shape, device=param.device)
        return ret

    def _copy_shared(self):
        ret = copy.copy(self)
        ret._params = set(self._params)
        ret._persistent = set(self._persistent)
        d = ret.__dict__
        for name in ret._params:
            d[name] = _share_param(d[name])
        return ret

    # -- optimizers -------------------------------------------------------------
    def enable_update(self):
        """Enable the update rule of every parameter that has one."""
        for param in self.params():
            rule = param.update_rule
            if rule is not None:
                rule.enabled = True

    def disable_update(self):
        """Disable the update rule of every parameter that has one (freeze the link)."""
        for param in self.params():
            rule = param.update_rule
            if rule is not None:
                rule.enabled = False

    @property
    def update_enabled(self):
        """True if at least one parameter has an enabled update rule."""
        for param in self.params():
            rule = param.update_rule
            if rule is not None and rule.enabled:
                return True
        return False

    # -- serialization ----------------------------------------------------------
    def serialize(self, serializer):
        """Save or load the parameters and persistent values with ``serializer``.

        For each parameter ``data = serializer(name, param.array)``; when the
        parameter is uninitialized and a deserializer returns an array, the
        parameter is initialised with that shape and the data copied in. Each
        persistent value is replaced by ``serializer(name, value)``. Chains
        pass ``serializer[child_name]`` to their children.
        """
        d = self.__dict__
        for name in sorted(self._params):
            _serialize_parameter(serializer, name, d[name], self._device)
        for name in sorted(self._persistent):
            d[name] = serializer(name, d[name])

    # -- devices (``device`` and ``xp`` are DeviceResident's) ----------------------
    def to_device(self, device):
        """Move the parameters, their gradients and array persistents to ``device``.

        Args:
            device: a device specifier (``'@numpy'``, ``'@cupy:0'``, a Device, ...).

        Returns:
            Link: this link.
        """
        device = backend.get_device(device)
        d = self.__dict__
        for name in self._params:
            d[name].to_device(device)
        array_types = backend.get_array_types()
        for name in self._persistent:
            value = d[name]
            if isinstance(value, array_types):
                d[name] = device.send(value)
        self._device = device
        return self

    def device_resident_accept(self, visitor):
        """Show ``visitor`` this link, then its parameters and array persistents (Chainer's)."""
        super().device_resident_accept(visitor)
        d = self.__dict__
        for name in self._params:
            visitor.visit_variable(d[name])
        array_types = backend.get_array_types()
        for name in self._persistent:
            if isinstance(d[name], array_types):
                d[name] = visitor.visit_array(d[name])

    def to_cpu(self):
        """Move the link to the CPU (``'@numpy'``); returns this link.

        Deprecated, as in Chainer v7 (it warns with DeprecationWarning): use
        ``to_device('@numpy')``.
        """
        _warn_deprecated_transfer(self, "to_cpu", "@numpy")
        return self.to_device(backend.cpu)

    def to_gpu(self, device=None):
        """Move the link to GPU ``device`` (an id; GPU 0 if None); returns this link.

        Deprecated, as in Chainer v7 (it warns with DeprecationWarning): use
        ``to_device('@cupy:N')``.
        """
        _warn_deprecated_transfer(self, "to_gpu", "@cupy:N")
        device_id = 0 if device is None else int(getattr(device, "id", device))
        return self.to_device(f"@cupy:{device_id}")

    # -- printing ---------------------------------------------------------------
    @property
    def printable_specs(self):
        """``(name, value)`` pairs shown by ``str(link)``; subclasses yield their arguments."""
        yield from ()

    def __str__(self):
        specs = ", ".join(f"{key}={value}" for key, value in self.printable_specs)
        return f"{type(self).__name__}({specs})"

    def __repr__(self):
        return str(self)


class Chain(Link):
    """A link composed of named child links.

    Assigning a :class:`Link` to an attribute inside ``with chain.init_scope():``
    registers it as a child under that name (and sets its ``name``). The
    parameters of a child ``l1`` appear in :meth:`namedparams` as ``'/l1/W'``.

    Args:
        **links: (old style) child links to register under the given names.

    >>> from dbr.core import Chain, Link
    >>> class Net(Chain):
    ...     def __init__(self):
    ...         super().__init__()
    ...         with self.init_scope():
    ...             self.body = Link()
    >>> print(Net())
    Net(
      (body): Link(),
    )
    """

    def __init__(self, **links):
        super().__init__()
        self._children = set()
        for name, link in links.items():
            self.add_link(name, link)

    def __getitem__(self, name):
        """The attribute ``name`` (normally a child link)."""
        return getattr(self, name)

    def __setattr__(self, name, value):
        if self._within_init_scope and isinstance(value, Link):
            if hasattr(self, name):
                raise AttributeError(
                    f"{type(self).__name__}: cannot register link {name!r}: "
                    "the attribute already exists"
                )
            value.name = name
            self._children.add(name)
        super().__setattr__(name, value)

    def __delattr__(self, name):
        self._children.discard(name)
        super().__delattr__(name)

    def add_link(self, name, link):
        """Register ``link`` as the child ``name`` (like assigning it in :meth:`init_scope`)."""
        if name in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__}.add_link: cannot register link "
                f"{name!r}: the attribute already exists"
            )
        if not isinstance(link, Link):
            raise TypeError(
                f"{type(self).__name__}.add_link: expected link to be a Link, "
                f"got {type(link).__name__}"
            )
        with self.init_scope():
            setattr(self, name, link)

    def params(self, include_uninit=True):
        """Yield the parameters of this chain, then of its children in name order."""
        yield from super().params(include_uninit)
        d = self.__dict__
        for name in sorted(self._children):
            yield from d[name].params(include_uninit)

    def namedparams(self, include_uninit=True):
        """Yield ``(path, parameter)`` pairs; a child's paths are prefixed by ``'/name'``."""
        yield from super().namedparams(include_uninit)
        d = self.__dict__
        for name in sorted(self._children):
            prefix = "/" + name
            for path, param in d[name].namedparams(include_uninit):
                yield prefix + path, param

    def links(self, skipself=False):
        """Yield this chain (unless ``skipself``) and every descendant, depth first."""
        if not skipself:
            yield self
        d = self.__dict__
        for name in sorted(self._children):
            yield from d[name].links()

    def namedlinks(self, skipself=False):
        """Yield ``(path, link)`` pairs: ``'/'`` for this chain, ``'/l1'``, ``'/l1/sub'``, ..."""
        if not skipself:
            yield "/", self
        d = self.__dict__
        for name in sorted(self._children):
            child = d[name]
            prefix = "/" + name
            yield prefix, child
            for path, link in child.namedlinks(skipself=True):
                yield prefix + path, link

    def children(self):
        """Yield the child links in name order."""
        d = self.__dict__
        for name in sorted(self._children):
            yield d[name]

    def addgrads(self, link):
        """Add the gradients of ``link`` (same structure) into this chain's, recursively."""
        super().addgrads(link)
        src = link.__dict__
        d = self.__dict__
        for name in self._children:
            d[name].addgrads(src[name])

    def copyparams(self, link, copy_persistent=True):
        """Copy the parameters (and persistents) of ``link`` into this chain's, recursively."""
        super().copyparams(link, copy_persistent)
        src = link.__dict__
        d = self.__dict__
        for name in self._children:
            d[name].copyparams(src[name], copy_persistent)

    def _copy_shared(self):
        ret = super()._copy_shared()
        ret._children = set(self._children)
        d = ret.__dict__
        for name in ret._children:
            child = d[name].copy("share")
            child.name = name
            d[name] = child
        return ret

    def serialize(self, serializer):
        """Serialize this chain's own values, then each child with ``serializer[name]``."""
        super().serialize(serializer)
        d = self.__dict__
        for name in sorted(self._children):
            d[name].serialize(serializer[name])

    def to_device(self, device):
        """Move this chain and all its children to ``device``; returns this chain."""
        device = backend.get_device(device)
        super().to_device(device)
        d = self.__dict__
        for name in self._children:
            d[name].to_device(device)
        return self

    def device_resident_accept(self, visitor):
        """Show ``visitor`` this chain's own values, then each child's."""
        super().device_resident_accept(visitor)
        d = self.__dict__
        for name in self._children:
            d[name].device_resident_accept(visitor)

    def __str__(self):
        d = self.__dict__
        entries = [(name, _layer_text(d[name])) for name in sorted(self._children)]
        return _format_children(type(self).__name__, entries)


class ChainList(Link, MutableSequence):
    """A link composed of a list of child links, named ``'0'``, ``'1'``, ... by position.

    Supports the list interface (``append``, ``extend``, ``insert``, ``pop``,
    ``remove``, ``reverse``, indexing and slicing, ``len``, iteration); the
    parameters of the child at index 1 appear in :meth:`namedparams` as
    ``'/1/W'``.

    Args:
        *links: the initial child links.

    >>> from dbr.core import ChainList, Link
    >>> print(ChainList(Link(), Link()))
    ChainList(
      (0): Link(),
      (1): Link(),
    )
    """

    def __init__(self, *links):
        super().__init__()
        self._children = []
        for link in links:
            self.add_link(link)

    def __setattr__(self, name, value):
        if self._within_init_scope and isinstance(value, Link):
            raise TypeError(
                f"{type(self).__name__}: cannot register link {name!r} by assignment "
                "in init_scope; use append or add_link"
            )
        super().__setattr__(name, value)

    def _check_link(self, who, value):
        if not isinstance(value, Link):
            raise TypeError(
                f"{type(self).__name__}.{who}: expected a Link, got {type(value).__name__}"
            )

    def _rename_children(self):
        for index, child in enumerate(self._children):
            child.name = str(index)

    def __getitem__(self, index):
        """The child at ``index`` (a list of children for a slice)."""
        return self._children[index]

    def __setitem__(self, index, value):
        """Replace the child at ``index`` (or the children in a slice, by an iterable of Links)."""
        if isinstance(index, slice):
            value = list(value)
            for link in value:
                self._check_link("__setitem__", link)
        else:
            self._check_link("__setitem__", value)
        self._children[index] = value
        self._rename_children()

    def __delitem__(self, index):
        """Remove the child at ``index`` (or the children in a slice)."""
        del self._children[index]
        self._rename_children()

    def insert(self, index, link):
        """Insert ``link`` before position ``index``."""
        self._check_link("insert", link)
        self._children.insert(index, link)
        self._rename_children()

    def __iter__(self):
        return iter(self._children)

    def __len__(self):
        return len(self._children)

    def add_link(self, link):
        """Append ``link`` as the last child."""
        self.append(link)

    def params(self, include_uninit=True):
        """Yield the parameters of this list, then of each child in order."""
        yield from super().params(include_uninit)
        for child in self._children:
            yield from child.params(include_uninit)

    def namedparams(self, include_uninit=True):
        """Yield ``(path, parameter)`` pairs; the child at index i contributes ``'/i/...'``."""
        yield from super().namedparams(include_uninit)
        for index, child in enumerate(self._children):
            prefix = f"/{index}"
            for path, param in child.namedparams(include_uninit):
                yield prefix + path, param

    def links(self, skipself=False):
        """Yield this list (unless ``skipself``) and every descendant, depth first."""
        if not skipself:
            yield self
        for child in self._children:
            yield from child.links()

    def namedlinks(self, skipself=False):
        """Yield ``(path, link)`` pairs: ``'/'`` for this list, ``'/0'``, ``'/0/sub'``, ..."""
        if not skipself:
            yield "/", self
        for index, child in enumerate(self._children):
            prefix = f"/{index}"
            yield prefix, child
            for path, link in child.namedlinks(skipself=True):
                yield prefix + path, link

    def children(self):
        """Yield the child links in order."""
        yield from self._children

    def _check_same_length(self, who, link):
        if len(link._children) != len(self._children):
            raise ValueError(
                f"{type(self).__name__}.{who}: expected a source link with "
                f"{len(self._children)} child links, got {len(link._children)}"
            )

    def addgrads(self, link):
        """Add the gradients of ``link`` (same structure) into this list's, recursively."""
        self._check_same_length("addgrads", link)
        super().addgrads(link)
        for child, src in zip(self._children, link._children):
            child.addgrads(src)

    def copyparams(self, link, copy_persistent=True):
        """Copy the parameters (and persistents) of ``link`` into this list's, recursively."""
        self._check_same_length("copyparams", link)
        super().copyparams(link, copy_persistent)
        for child, src in zip(self._children, link._children):
            child.copyparams(src, copy_persistent)

    def _copy_shared(self):
        ret = super()._copy_shared()
        children = []
        for index, child in enumerate(self._children):
            child = child.copy("share")
            child.name = str(index)
            children.append(child)
        ret._children = children
        return ret

    def serialize(self, serializer):
        """Serialize this list's own values, then the child at index i with ``serializer['i']``."""
        super().serialize(serializer)
        for index, child in enumerate(self._children):
            child.serialize(serializer[str(index)])

    def to_device(self, device):
        """Move this list and all its children to ``device``; returns this list."""
        device = backend.get_device(device)
        super().to_device(device)
        for child in self._children:
            child.to_device(device)
        return self

    def device_resident_accept(self, visitor):
        """Show ``visitor`` this list's own values, then each child's."""
        super().device_resident_accept(visitor)
        for child in self._children:
            child.device_resident_accept(visitor)

    def _printed_items(self):
        """What ``str`` lists, by index (a subclass may list more than its child links)."""
        return self._children

    def __str__(self):
        entries = [(index, _layer_text(item)) for index, item in enumerate(self._printed_items())]
        return _format_children(type(self).__name__, entries)
