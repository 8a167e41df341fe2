"""GradientLARS: layer-wise adaptive rate scaling of the gradients."""

from dbr.core import backend
from dbr.training.optimizer import gpu_elementwise, grad_or_none
from dbr.training.optimizer_hooks._util import accumulation_dtype, check_real, squared_sum

# p_sq and g_sq are 0-d squared norms on the device: the rate is decided there, without a sync.
_LARS_ELEMENTWISE = {
    "in_params": "T p, S p_sq, S g_sq, float64 threshold, float64 weight_decay, float64 eps",
    "out_params": "T g",
    "operation": (
        "S p_norm = sqrt(p_sq);"
        "S rate = p_norm > (S)threshold"
        " ? (S)(p_norm / ((S)eps + sqrt(g_sq) + (S)weight_decay * p_norm)) : (S)1;"
        "g = ((S)g + (S)weight_decay * (S)p) * rate"
    ),
    "name": "dbr_gradient_lars",
}


class GradientLARS:
    """Optimizer/UpdateRule hook for layer-wise adaptive rate scaling (LARS).

    See You et al., "Large Batch Training of Convolutional Networks"
    (arXiv:1708.03888). For each parameter ``w`` with gradient ``g``, when
    ``||w|| > threshold`` the gradient becomes::

        g <- clip_rate * (g + weight_decay * w)
        clip_rate = ||w|| / (eps + ||g|| + weight_decay * ||w||)

    and otherwise ``g <- g + weight_decay * w``. ``clip_rate`` is the paper's
    local learning rate without the LARS coefficient, which the optimizer's
    ``lr`` absorbs. On a GPU the two norms are reductions (in float32 at
    least) and the rest is one fused kernel; nothing waits for the host.

    Args:
        threshold (float): parameters whose L2 norm is at most this keep an
            unscaled gradient.
        weight_decay (float): coefficient of the weight decay.
        eps (float): small non-negative value for numerical stability.

    Attributes:
        threshold (float), weight_decay (float), eps (float): as above.
        timing (str): ``'pre'`` (the default) or ``'post'``.
        call_for_each_param (bool): True: called as ``hook(rule, param)``.
        name (str): ``'GradientLARS'``.
    """

    name = "GradientLARS"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, threshold=0.01, weight_decay=0.0, eps=1e-9):
        who = "GradientLARS"
        self.threshold = check_real(who, "threshold", threshold)
        self.weight_decay = check_real(who, "weight_decay", weight_decay)
        self.eps = check_real(who, "eps", eps, minimum=0.0)

    def __call__(self, rule, param):
        """Scale ``param.grad`` in place as described in the class docstring."""
        p, g = param.array, grad_or_none(param)
        if p is None or g is None:
            return
        xp = backend.get_array_module(p)
        if xp.__name__ != "numpy":
            self._scale_on_gpu(param, p, g)
            return
        p_norm = xp.linalg.norm(p)
        g_norm = xp.linalg.norm(g)
        local_rate = p_norm / (self.eps + g_norm + self.weight_decay * p_norm)
        rate = xp.where(p_norm > self.threshold, local_rate, 1.0)
        g += self.weight_decay * p
        g *= rate.astype(g.dtype, copy=False)

    def _scale_on_gpu(self, param, p, g):
        with param.device:
            dtype = accumulation_dtype(p.dtype, g.dtype)
            sums = param.xp.empty(2, dtype)
            squared_sum(p, sums[0])
            squared_sum(g, sums[1])
            gpu_elementwise(_LARS_ELEMENTWISE)(
                p, sums[0], sums[1], self.threshold, self.weight_decay, self.eps, g
            )
