"""WeightStandardization: a link's weight standardized per output unit before each forward."""

from dbr.core import ops
from dbr.core.link_hook import LinkHook


def _standardize(W, eps):
    """``(W - mean) / sqrt(var + eps)``, the statistics over every axis of ``W`` but the first."""
    axes = tuple(range(1, W.ndim))
    scale = 1.0 / (W.size // W.shape[0])
    centered = W - ops.sum(W, axis=axes, keepdims=True) * scale
    var = ops.sum(centered * centered, axis=axes, keepdims=True) * scale
    return centered * (var + eps) ** -0.5


class WeightStandardization(LinkHook):
    """Link hook standardizing a link's weight over each output unit before each forward.

    Before every forward of the link, the weight ``W`` (of name
    ``weight_name``, at least 2-D) is replaced by

    .. math::

        \\hat W_i = \\frac{W_i - \\mu_i}{\\sqrt{\\sigma_i^2 + \\epsilon}},

    where ``W_i`` is the slice of output unit ``i`` (axis 0) and ``mu_i`` and
    ``sigma_i^2`` are its mean and (population) variance over all its other
    axes: group normalization of ``W`` with one group, unit scale and no
    shift. The forward sees the standardized weight, a Variable whose
    gradient flows back to ``W``; after the forward the link's attribute is
    the Parameter ``W`` again. A lazily initialized weight is initialized
    from the first input's ``shape[1]``. Register the hook on one link with
    :meth:`dbr.core.Link.add_hook`; it cannot be used as a context manager.

    Args:
        eps (float): added to the variance (keyword only).
        weight_name (str): the attribute name of the weight parameter.
        name (str or None): the name of the hook (``'WeightStandardization'``
            when None).

    See: S. Qiao et al., `Weight Standardization
    <https://arxiv.org/abs/1903.10520>`_.
    """

    name = "WeightStandardization"

    def __init__(self, *, eps=1e-5, weight_name="W", name=None):
        self.eps = eps
        self.weight_name = weight_name
        self._initialized = False
        if name is not None:
            self.name = name

    def __enter__(self):
        raise NotImplementedError(
            "WeightStandardization: the hook standardizes one link's weight; register it "
            "with link.add_hook(hook) instead of using it as a context manager"
        )

    def __exit__(self, *exc_info):
        raise NotImplementedError(
            "WeightStandardization: the hook cannot be used as a context manager"
        )

    def added(self, link):
        """Check that ``link`` has the weight."""
        if link is None:
            return
        if not hasattr(link, self.weight_name):
            raise ValueError(
                f"WeightStandardization: the link {type(link).__name__} has no weight "
                f"{self.weight_name!r}"
            )
        if getattr(link, self.weight_name).array is not None:
            self._initialized = True

    def forward_preprocess(self, cb_args):
        """Replace the link's weight by its standardized Variable for the forward."""
        link = cb_args.link
        if not self._initialized and getattr(link, self.weight_name).array is None:
            if not cb_args.args or cb_args.args[0] is None:
                raise ValueError(
                    f"WeightStandardization: the weight {self.weight_name!r} of "
                    f"{type(link).__name__} is not initialized and the call has no "
                    "positional input to infer its shape from"
                )
            link._initialize_params(cb_args.args[0].shape[1])
        weight = getattr(link, self.weight_name)
        if weight.ndim < 2:
            raise ValueError(
                f"WeightStandardization: expected the weight {self.weight_name!r} of "
                f"{type(link).__name__} to have at least 2 axes, got the shape {weight.shape}"
            )
        # The link's attribute is the Parameter again after the forward.
        self.original_weight = weight
        setattr(link, self.weight_name, _standardize(weight, self.eps))

    def forward_postprocess(self, cb_args):
        """Put the weight Parameter back on the link (the graph holds the standardized one)."""
        setattr(cb_args.link, self.weight_name, self.original_weight)
