"""The multi-node optimizer: average the gradients over the ranks, then update as usual."""

from dbr.distributed.communicators import MpiCommunicatorBase, _grad_params, _unpack

__all__ = ["create_multi_node_optimizer"]


def _layout(target):
    return [
        (name, p.array is not None) for name, p in sorted(target.namedparams(), key=lambda i: i[0])
    ]


class _MultiNodeOptimizer:
    """Wraps an optimizer: every update averages the gradients over the ranks first.

    Until the set of initialised parameters stops changing (the first
    update, and again after a lazily shaped link initialises), an update
    broadcasts rank 0's parameters instead, so that every rank starts equal.
    Every other attribute is the wrapped optimizer's.
    """

    def __init__(self, actual_optimizer, communicator, zero_fill):
        state = self.__dict__
        state["actual_optimizer"] = actual_optimizer
        state["communicator"] = communicator
        state["zero_fill"] = zero_fill
        state["_target_layout"] = None

    def _compute_grads(self, lossfun, args, kwds):
        target = self.actual_optimizer.target
        loss = lossfun(*args, **kwds)
        if getattr(self.actual_optimizer, "_use_cleargrads", True):
            target.cleargrads()
        else:
            target.zerograds()
        loss.backward(loss_scale=self.actual_optimizer._loss_scale)

    def _layout_changed(self):
        layout = _layout(self.actual_optimizer.target)
        changed = layout != self._target_layout
        self.__dict__["_target_layout"] = layout
        return changed

    def update(self, lossfun=None, *args, **kwds):
        """Compute gradients with ``lossfun`` if given, average them over the ranks, update."""
        if lossfun is not None:
            self._compute_grads(lossfun, args, kwds)
        target = self.actual_optimizer.target
        if self._layout_changed():
            self.communicator.bcast_data(target)
            return
        self.communicator.multi_node_mean_grad(target, self.zero_fill)
        self.actual_optimizer.update(None, *args, **kwds)

    def setup(self, link):
        """Set up the wrapped optimizer on ``link``; return this wrapper."""
        self.actual_optimizer.setup(link)
        return self

    @property
    def needs_broadcast(self):
        """Whether the next update broadcasts rank 0's parameters instead of updating.

        Setting it False (after every rank loaded the same checkpoint) skips that broadcast.
        """
        return _layout(self.actual_optimizer.target) != self._target_layout

    def __getattr__(self, name):
        return getattr(self.__dict__["actual_optimizer"], name)

    def __setattr__(self, name, value):
        if name == "needs_broadcast":
            layout = None if value else _layout(self.actual_optimizer.target)
            self.__dict__["_target_layout"] = layout
            return
        setattr(self.actual_optimizer, name, value)


class _DoubleBufferingOptimizer(_MultiNodeOptimizer):
    """Overlaps the gradient exchange with the next step's forward and backward.

    Step t starts averaging its gradients without waiting and updates with
    the averaged gradients of step t-1, as ChainerMN's double buffering
    does: after the broadcast step, the first step only starts an exchange,
    and every later step applies the previous step's mean.
    """

    def __init__(self, actual_optimizer, communicator, zero_fill):
        super().__init__(actual_optimizer, communicator, zero_fill)
        self.__dict__["_pending"] = None

    def wait(self):
        """Finish the exchange in flight, if any; return its ``{dtype: (mean, params)}``."""
        pending = self._pending
        self.__dict__["_pending"] = None
        if pending is None:
            return None
        return self.communicator._finish_mean_grad(pending)

    def update(self, lossfun=None, *args, **kwds):
        """Start averaging this step's gradients; update with the previous step's mean."""
        if lossfun is not None:
            self._compute_grads(lossfun, args, kwds)
        target = self.actual_optimizer.target
        if self._layout_changed():
            self.wait()
            self.communicator.bcast_data(target)
            return
        previous = self.wait()
        self.__dict__["_pending"] = self.communicator._start_mean_grad(
            target, _grad_params(target, self.zero_fill)
        )
        if previous is None:
            return
        for _, members in previous.values():
            for p in members:
                if p.grad is None:
                    p.grad = p.xp.empty_like(p.array)
        _unpack(previous, "grad")
        self.actual_optimizer.update(None, *args, **kwds)


def create_multi_node_optimizer(
    actual_optimizer, communicator, double_buffering=False, zero_fill=True
):
    """Wrap ``actual_optimizer`` so that its updates use gradients averaged over the ranks.

    Args:
        actual_optimizer: a dbr optimizer (``optimizers.Adam()``, ...), set up
            now or later through the wrapper's ``setup``.
        communicator: a communicator from :func:`create_communicator`.
        double_buffering (bool): overlap the exchange with the next step;
            each update then applies the previous step's averaged gradients
            (MPI communicators: a non-blocking all-reduce).
        zero_fill (bool): give initialised parameters without a gradient
            zeros, so that every rank exchanges the same arrays; if False
            they are skipped.

    Returns:
        The wrapping optimizer; every other attribute is ``actual_optimizer``'s.
    """
    if double_buffering:
        if not isinstance(communicator, MpiCommunicatorBase) or not hasattr(
            communicator, "_start_mean_grad"
        ):
            raise ValueError(
                f"create_multi_node_optimizer: double_buffering needs a communicator from "
                f"create_communicator, got {type(communicator).__name__}"
            )
        return _DoubleBufferingOptimizer(actual_optimizer, communicator, zero_fill)
    return _MultiNodeOptimizer(actual_optimizer, communicator, zero_fill)
