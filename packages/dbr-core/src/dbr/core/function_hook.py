"""FunctionHook: callbacks run around the forward and backward of every FunctionNode.

A hook is registered either globally for the calling thread, by using it as a
context manager (``with TimerHook() as hook: ...``), or on one node with
:meth:`dbr.core.FunctionNode.add_hook`. The thread's global hooks live in
``config._function_hooks``, a dict that is replaced, never mutated, so that a
FunctionNode can iterate over it without a lock.
"""

import types

from dbr.core import configuration
from dbr.core.configuration import config


class FunctionHook:
    """Base class of function hooks: every callback is a no-op here.

    A subclass overrides the callbacks it needs and gives itself a distinct
    ``name``: at most one hook of a name is registered in a thread at a time.

    The callbacks receive the FunctionNode and its data as arrays:
    ``in_data`` is the tuple of input arrays of the forward (an entry is None
    in backward when the node did not retain that input), ``out_grad`` the
    tuple of gradient arrays of the outputs (None for an output that
    received no gradient).

    Used as a context manager, the hook is registered globally in the calling
    thread for the duration of the ``with`` block::

        with dbr.core.function_hooks.TimerHook() as hook:
            loss.backward()
        hook.print_report()
    """

    name = "FunctionHook"

    def __enter__(self):
        hooks = config._function_hooks
        if self.name in hooks:
            raise KeyError(
                f"FunctionHook: a hook named {self.name!r} is already registered in this "
                f"thread ({hooks[self.name]!r}); give this hook another name"
            )
        config._function_hooks = {**hooks, self.name: self}
        self.added(None)
        return self

    def __exit__(self, *exc_info):
        hooks = config._function_hooks
        if hooks.get(self.name) is not self:
            return
        remaining = {k: v for k, v in hooks.items() if k != self.name}
        inherited = configuration.global_config._function_hooks
        if remaining == inherited:
            # Fall back to the global entry, so later changes to it are seen again.
            vars(config).pop("_function_hooks", None)
        else:
            config._function_hooks = remaining
        self.deleted(None)

    def added(self, function=None):
        """Called when the hook is registered: on ``function``, or globally if None."""

    def deleted(self, function=None):
        """Called when the hook is unregistered: from ``function``, or globally if None."""

    def forward_preprocess(self, function, in_data):
        """Called before ``function`` computes its forward on the tuple of arrays ``in_data``."""

    def forward_postprocess(self, function, in_data):
        """Called after ``function`` computed its forward on the tuple of arrays ``in_data``."""

    def forward_outputs(self, function, in_data, outputs):
        """Called after :meth:`forward_postprocess` with the tuple of output arrays too.

        dbr's addition to Chainer's callbacks: a hook that must see what a
        function computed (a recorder of static schedules, say) overrides it.
        """

    def backward_preprocess(self, function, in_data, out_grad):
        """Called before ``function`` computes its backward.

        ``in_data`` holds the retained input arrays (None for the others) and
        ``out_grad`` the gradient arrays of the outputs (None where absent).
        """

    def backward_postprocess(self, function, in_data, out_grad):
        """Called after ``function`` computed its backward (arguments as in the preprocess)."""

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


def get_function_hooks():
    """Return the function hooks registered globally in this thread (name → FunctionHook).

    The mapping is a read-only view; register hooks with ``with hook:``.
    """
    return types.MappingProxyType(config._function_hooks)
