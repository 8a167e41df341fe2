"""The base of the built-in update rules, and the arithmetic several of them share."""

from dbr.training import optimizer


class FusedRule(optimizer.UpdateRule):
    """An update rule whose state is arrays like the parameter, updated on the GPU by one kernel.

    A subclass gives its default hyperparameters (``_defaults``), its state
    arrays in the kernel's order with their initial value, 0 or 1
    (``_initial_state``), the CPU update on arrays (:meth:`_update_cpu`), and
    the GPU kernel's definition (``_elementwise``) with its scalar arguments
    (:meth:`_kernel_scalars`; by default the hyperparameters named in
    ``_kernel_hyperparams``): the kernel is called as
    ``kernel(grad, *scalars, param, *state)``. Both updates leave a parameter
    without a gradient (or not initialised) unchanged. A rule whose CPU update
    uses ``out=`` temporaries sets ``update_core_cpu`` to
    ``optimizer.cpu_update_handles_0dim(FusedRule.update_core_cpu)``.
    """

    _defaults = None
    _initial_state = {}
    _elementwise = None
    _kernel_hyperparams = ()

    def __init__(self, parent_hyperparam=None, **hyperparams):
        super().__init__(parent_hyperparam or self._defaults)
        self._set_hyperparams(**hyperparams)

    def init_state(self, param):
        """Create the state arrays, zeros or ones like the parameter."""
        xp = param.xp
        array = param.array
        for name, value in self._initial_state.items():
            self.state[name] = xp.ones_like(array) if value else xp.zeros_like(array)

    def update_core_cpu(self, param):
        """Apply the update in place (NumPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        self._update_cpu(param.xp, grad, param.array, *self._state_arrays())
        self._advance()

    def update_core_gpu(self, param):
        """Apply the update in place with one fused kernel (CuPy arrays)."""
        grad = optimizer.grad_or_none(param)
        if grad is None:
            return
        data = param.array
        scalars = self._kernel_scalars(grad, data)
        optimizer.gpu_elementwise(self._elementwise)(grad, *scalars, data, *self._state_arrays())
        self._advance()

    def _state_arrays(self):
        state = self.state
        return [state[name] for name in self._initial_state]

    def _update_cpu(self, xp, grad, data, *state):
        """Update ``data`` and the ``state`` arrays (in ``_initial_state``'s order) in place."""
        raise NotImplementedError

    def _kernel_scalars(self, grad, data):
        """The scalar arguments of the GPU kernel, between ``grad`` and the parameter."""
        hp = self.hyperparam
        return [getattr(hp, name) for name in self._kernel_hyperparams]

    def _advance(self):
        """Advance what the rule keeps on the host after each applied update (nothing here)."""


def update_moments(xp, grad, m, v, beta1, beta2):
    """Update Adam's moment estimates in place; return a scratch array like ``grad``.

    ``m += (1 - beta1) * (grad - m); v += (1 - beta2) * (grad**2 - v)``, with no
    temporary beyond the returned one (the CPU path of Adam and M-SVAG).
    """
    tmp = grad - m
    tmp *= 1 - beta1
    m += tmp
    xp.multiply(grad, grad, out=tmp)
    tmp -= v
    tmp *= 1 - beta2
    v += tmp
    return tmp


def decay_mean_square(grad, mean_square, decay):
    """``mean_square = decay * mean_square + (1 - decay) * grad**2`` in place.

    Returns the scratch array like ``grad`` it used, free for the caller (the
    CPU path of RMSprop, RMSpropGraves and AdaDelta).
    """
    tmp = grad * (1 - decay)
    tmp *= grad
    mean_square *= decay
    mean_square += tmp
    return tmp
