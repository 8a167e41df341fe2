"""LinkHook: callbacks run before and after the forward of a Link.

A hook is registered either globally for the calling thread, by using it as a
context manager (``with TimerHook() as hook: ...``), or on one link with
:meth:`dbr.core.Link.add_hook`. The thread's global hooks live in
``config._link_hooks``, a dict that is replaced, never mutated, so that a
call in progress keeps iterating over the dict it started with.
"""

import threading

from dbr.core import configuration
from dbr.core.configuration import config

# How many hooks are registered with ``with hook:`` in all threads together. Reading the
# thread-local config costs Link.__call__ about 60 ns; this count, read first, lets a call
# skip that lookup while no thread has a global link hook.
_global_hook_count = [0]
_count_lock = threading.Lock()


class _ForwardPreprocessCallbackArgs:
    """What :meth:`LinkHook.forward_preprocess` receives: the link and its call's arguments."""

    __slots__ = ("link", "forward_name", "args", "kwargs")

    def __init__(self, link, forward_name, args, kwargs):
        self.link = link
        self.forward_name = forward_name
        self.args = args
        self.kwargs = kwargs

    def __repr__(self):
        return (
            f"<{type(self).__name__} link={self.link} forward_name={self.forward_name} "
            f"args={self.args} kwargs={self.kwargs}>"
        )


class _ForwardPostprocessCallbackArgs:
    """What :meth:`LinkHook.forward_postprocess` receives: the call's arguments and output."""

    __slots__ = ("link", "forward_name", "args", "kwargs", "out")

    def __init__(self, link, forward_name, args, kwargs, out):
        self.link = link
        self.forward_name = forward_name
        self.args = args
        self.kwargs = kwargs
        self.out = out

    def __repr__(self):
        return (
            f"<{type(self).__name__} link={self.link} forward_name={self.forward_name} "
            f"args={self.args} kwargs={self.kwargs} out={self.out}>"
        )


class LinkHook:
    """Base class of link hooks: every callback is a no-op here.

    When a link is called (``link(x)``), the ``forward_preprocess`` of each
    hook registered to it runs before :meth:`~dbr.core.Link.forward` and the
    ``forward_postprocess`` after it. The hooks of a call are the thread's
    global hooks, in the order of registration, then the link's own
    (:attr:`~dbr.core.Link.local_link_hooks`); a link's own hook replaces a
    global one of the same name.

    Used as a context manager, the hook is registered globally in the calling
    thread for the duration of the ``with`` block, and so applies to every
    link called there::

        with dbr.core.link_hooks.TimerHook() as hook:
            model(x)
        hook.print_report()

    :meth:`dbr.core.Link.add_hook` registers it on one link instead, until
    :meth:`dbr.core.Link.delete_hook`.

    Attributes:
        name (str): the key of the hook among those registered; at most one
            hook of a name is registered globally in a thread, and at most one
            on a link.
    """

    name = "LinkHook"

    def __enter__(self):
        hooks = config._link_hooks
        if self.name in hooks:
            raise KeyError(
                f"LinkHook: a hook named {self.name!r} is already registered in this "
                f"thread ({hooks[self.name]!r}); give this hook another name"
            )
        config._link_hooks = {**hooks, self.name: self}
        with _count_lock:
            _global_hook_count[0] += 1
        self.added(None)
        return self

    def __exit__(self, *exc_info):
        hooks = config._link_hooks
        if hooks.get(self.name) is not self:
            return
        remaining = {k: v for k, v in hooks.items() if k != self.name}
        inherited = configuration.global_config._link_hooks
        if remaining == inherited:
            # Fall back to the global entry, so later changes to it are seen again.
            vars(config).pop("_link_hooks", None)
        else:
            config._link_hooks = remaining
        with _count_lock:
            _global_hook_count[0] -= 1
        self.deleted(None)

    def added(self, link):
        """Called when the hook is registered: on ``link``, or globally if ``link`` is None."""

    def deleted(self, link):
        """Called when the hook is unregistered: from ``link``, or globally if None."""

    def forward_preprocess(self, args):
        """Called before a link's forward.

        Args:
            args: the callback data, with the attributes ``link`` (the
                :class:`~dbr.core.Link` called), ``forward_name`` (the name of
                the method run, ``'forward'``), ``args`` (the tuple of
                positional arguments of the call) and ``kwargs`` (the dict of
                its keyword arguments).
        """

    def forward_postprocess(self, args):
        """Called after a link's forward.

        Args:
            args: the callback data: ``link``, ``forward_name``, ``args`` and
                ``kwargs`` as in :meth:`forward_preprocess`, and ``out``, what
                the forward returned.
        """

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"
