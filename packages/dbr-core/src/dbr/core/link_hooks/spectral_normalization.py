"""SpectralNormalization: a link's weight divided by its largest singular value."""

import sys

from dbr.core import backend, ops
from dbr.core.configuration import config
from dbr.core.link_hook import LinkHook
from dbr.core.variable import Parameter

# The deconvolution links of dbr.links keep their output channels on axis 1 of W. dbr.core
# may not import dbr.links; a link of those classes exists only once it is imported.
_OUTPUT_AXIS_1 = ("Deconvolution2D", "DeconvolutionND")


def _l2normalize(xp, v, eps):
    return v / (xp.linalg.norm(v) + eps)


def _output_axis(link):
    links = sys.modules.get("dbr.links")
    if links is not None:
        classes = tuple(getattr(links, name) for name in _OUTPUT_AXIS_1 if hasattr(links, name))
        if isinstance(link, classes):
            return 1
    return 0


class SpectralNormalization(LinkHook):
    """Link hook dividing a link's weight by its largest singular value before each forward.

    Before every forward of the link, the weight ``W`` (of name
    ``weight_name``), viewed as a matrix of its output axis against all the
    others, is replaced by

    .. math::

        \\bar W = \\frac{W}{\\sigma(W)}, \\qquad \\sigma(W) = u^\\top W v,

    where ``u`` and ``v`` approximate the first left and right singular
    vectors of ``W``: ``n_power_iteration`` steps of the power iteration,
    ``v = normalize(u W)`` then ``u = normalize(W v)`` (``normalize(x) =
    x / (||x|| + eps)``), start from the ``u`` kept on the link. The forward
    sees the normalized weight, a Variable whose gradient flows to ``W``
    through both the numerator and ``sigma`` (``u`` and ``v`` are constants);
    after the forward the link's attribute is the Parameter ``W`` again.

    ``u``, of shape ``(W.shape[axis],)`` and ``W``'s dtype, is kept on the link
    as the persistent value ``<weight_name>_u`` (so it is saved with the
    model); it starts as standard normal samples from ``link.xp.random``.
    In training mode (``config.train``) each forward stores the updated
    ``u`` there; in test mode it is used but not changed. When the forward is
    recomputed (``config.in_recomputing``, as by ``F.forget``), the ``u`` and
    ``v`` of the original forward are reused.

    The output axis is 0, or 1 for ``L.Deconvolution2D`` and
    ``L.DeconvolutionND`` (whose ``W`` is ``(in_channels, out_channels, ...)``).
    The hook handles lazily initialized weights: they are initialized from the
    first input's ``shape[1]`` before the first normalization. Register the
    hook on one link with :meth:`dbr.core.Link.add_hook`, before setting up the
    optimizer when ``use_gamma`` adds a parameter; it cannot be used as a
    context manager.

    Args:
        n_power_iteration (int): the number of power iteration steps per
            forward (at least 1).
        eps (float): added to norms in the power iteration.
        use_gamma (bool): also scale the weight by a learned scalar parameter
            ``gamma`` registered on the link, initialized with ``W``'s largest
            singular value (computed by SVD): ``gamma * W / sigma``.
        factor (float or None): when given, ``sigma`` is divided by it, so the
            normalized weight's spectral norm is about ``factor``.
        weight_name (str): the attribute name of the weight parameter.
        name (str or None): the name of the hook (``'SpectralNormalization'``
            when None).

    Attributes:
        vector_name (str): the name of ``u`` on the link, ``weight_name + '_u'``.
        axis (int): the output axis of the weight.

    See: T. Miyato et al., `Spectral Normalization for Generative Adversarial
    Networks <https://arxiv.org/abs/1802.05957>`_.
    """

    name = "SpectralNormalization"

    def __init__(
        self,
        n_power_iteration=1,
        eps=1e-6,
        use_gamma=False,
        factor=None,
        weight_name="W",
        name=None,
    ):
        if isinstance(n_power_iteration, bool) or not isinstance(n_power_iteration, int):
            raise TypeError(
                "SpectralNormalization: expected n_power_iteration to be an int, got "
                f"{type(n_power_iteration).__name__}"
            )
        if n_power_iteration < 1:
            raise ValueError(
                "SpectralNormalization: expected n_power_iteration to be at least 1, got "
                f"{n_power_iteration}"
            )
        self.n_power_iteration = n_power_iteration
        self.eps = eps
        self.use_gamma = use_gamma
        self.factor = factor
        self.weight_name = weight_name
        self.vector_name = weight_name + "_u"
        self._initialized = False
        self.axis = 0
        if name is not None:
            self.name = name

    def __enter__(self):
        raise NotImplementedError(
            "SpectralNormalization: the hook normalizes one link's weight; register it "
            "with link.add_hook(hook) instead of using it as a context manager"
        )

    def __exit__(self, *exc_info):
        raise NotImplementedError(
            "SpectralNormalization: the hook cannot be used as a context manager"
        )

    def added(self, link):
        """Check that ``link`` has the weight; create ``u`` (and ``gamma``) if it is set."""
        if link is None:
            return
        if not hasattr(link, self.weight_name):
            raise ValueError(
                f"SpectralNormalization: the link {type(link).__name__} has no weight "
                f"{self.weight_name!r}"
            )
        self.axis = _output_axis(link)
        if getattr(link, self.weight_name).array is not None:
            self._prepare_parameters(link)

    def deleted(self, link):
        """Remove ``u`` (and ``gamma``) from ``link``."""
        if link is None:
            return
        delattr(link, self.vector_name)
        if self.use_gamma:
            del link.gamma

    def forward_preprocess(self, cb_args):
        """Replace the link's weight by its normalized Variable for the forward."""
        link = cb_args.link
        if not self._initialized:
            self._prepare_parameters(link, cb_args.args[0] if cb_args.args else None)
        weight = getattr(link, self.weight_name)
        # The link's attribute is the Parameter again after the forward.
        self.original_weight = weight
        with backend.using_device(link.device):
            normalized_weight = self.normalize_weight(link)
        setattr(link, self.weight_name, normalized_weight)

    def forward_postprocess(self, cb_args):
        """Put the weight Parameter back on the link (the graph holds the normalized one)."""
        setattr(cb_args.link, self.weight_name, self.original_weight)

    def _prepare_parameters(self, link, input_variable=None):
        """Create ``u`` (and ``gamma``) on ``link``, first initializing a lazy weight."""
        weight = getattr(link, self.weight_name)
        if weight.array is None:
            if input_variable is None:
                raise ValueError(
                    f"SpectralNormalization: the weight {self.weight_name!r} of "
                    f"{type(link).__name__} is not initialized and the call has no "
                    "positional input to infer its shape from"
                )
            link._initialize_params(input_variable.shape[1])
        weight = getattr(link, self.weight_name)
        size = weight.shape[self.axis]
        if size == 0:
            raise ValueError(
                f"SpectralNormalization: expected {self.weight_name}.shape[{self.axis}] "
                f"> 0, got the shape {weight.shape}"
            )
        xp = link.xp
        u = xp.random.normal(size=(size,)).astype(weight.dtype)
        setattr(link, self.vector_name, u)
        link.register_persistent(self.vector_name)
        if self.use_gamma:
            singular_values = xp.linalg.svd(self.reshape_W(weight.array), compute_uv=False)
            gamma = Parameter(singular_values[:1].reshape(()).astype(weight.dtype))
            gamma.to_device(link.device)
            with link.init_scope():
                link.gamma = gamma
        self._initialized = True

    def normalize_weight(self, link):
        """Return the normalized weight of ``link`` as a Variable (updating ``u`` in training)."""
        W = getattr(link, self.weight_name)
        u = getattr(link, self.vector_name)
        weight_matrix = self.reshape_W(W)
        if config.in_recomputing:
            v = self.v
        else:
            u, v = self._power_iteration(weight_matrix.array, u)
        sigma = ops.matmul(ops.matmul(u, weight_matrix), v)
        if self.factor is not None:
            sigma = sigma / self.factor
        if self.use_gamma:
            W = link.gamma * W / sigma
        else:
            W = W / sigma
        if not config.in_recomputing:
            self.v = v
            if config.train:
                link.xp.copyto(getattr(link, self.vector_name), u)
        return W

    def _power_iteration(self, weight_matrix, u):
        xp = backend.get_array_module(weight_matrix)
        for _ in range(self.n_power_iteration):
            v = _l2normalize(xp, xp.dot(u, weight_matrix), self.eps)
            u = _l2normalize(xp, xp.dot(weight_matrix, v), self.eps)
        return u, v

    def reshape_W(self, W):
        """View the weight ``W`` (array or Variable) as a 2-D matrix, its output axis first."""
        if self.axis != 0:
            W = W.transpose([self.axis] + [i for i in range(W.ndim) if i != self.axis])
        if W.ndim == 2:
            return W
        return W.reshape(W.shape[0], -1)
