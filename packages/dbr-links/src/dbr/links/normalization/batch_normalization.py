"""BatchNormalization: batch normalization with running statistics."""

import copy

import numpy

import dbr.functions as F
from dbr.core import Link, Parameter, config, get_dtype, initializers


def _typed_initializer(value, default, dtype):
    """An initializer for ``value`` (``default`` when None) that makes ``dtype`` arrays."""
    initializer = initializers.get_initializer(default if value is None else value)
    # numpy.dtype(None) is float64, so ``None != float64`` is False: test None first.
    if isinstance(initializer, initializers.Initializer) and (
        initializer.dtype is None or initializer.dtype != dtype
    ):
        initializer = copy.copy(initializer)
        initializer.dtype = dtype
    return initializer


class ArgumentRuntimeError(ValueError, RuntimeError):
    """A bad argument that Chainer's link rejects with RuntimeError.

    A ValueError, as dbr reports bad arguments, that ``except RuntimeError``
    also catches, as code written for Chainer expects.
    """


def _parse_forward_kwargs(cls_name, kwargs):
    """Return ``finetune`` from ``forward``'s keyword arguments, rejecting any other."""
    finetune = kwargs.pop("finetune", False)
    if kwargs:
        if "test" in kwargs:
            raise ValueError(
                f"{cls_name}.forward: the test argument is not supported anymore; "
                "use dbr.core.using_config('train', False)"
            )
        raise TypeError(
            f"{cls_name}.forward: unexpected keyword arguments {sorted(kwargs)}; "
            "expected only finetune"
        )
    return finetune


class BatchNormalization(Link):
    """Batch normalization layer, over the outputs of linear or convolution layers.

    It wraps :func:`dbr.functions.batch_normalization` (training) and
    :func:`dbr.functions.fixed_batch_normalization` (testing) and runs in
    three modes:

    - training (``config.train`` True): normalizes by the statistics of the
      batch and keeps moving averages of them in ``avg_mean`` and
      ``avg_var``: ``avg = decay * avg + (1 - decay) * batch_statistic``,
      where the variance is the unbiased one (``m / (m - 1)`` times the
      batch variance, ``m`` elements per channel);
    - fine-tuning (training with ``finetune=True``): the same, but with
      ``decay = 1 - 1 / N`` for the ``N``-th such call, so that the averages
      are the plain means of the batch statistics since
      :meth:`start_finetuning`;
    - testing (``config.train`` False): normalizes by ``avg_mean`` and
      ``avg_var``, which stay unchanged.

    Args:
        size (int, tuple of ints or None): the shape of the channel axes
            (those not in ``axis``). None infers it from the first input
            (then ``axis`` is required).
        decay (float): decay rate of the moving averages (default 0.9).
        eps (float): added to the variance (default 2e-5).
        dtype: dtype of the parameters and statistics; None uses
            ``config.dtype``. :data:`dbr.core.mixed16` (given, or as
            ``config.dtype``) keeps them in float32 for float16 inputs.
        use_gamma (bool): learn the scale ``gamma`` (else it is 1).
        use_beta (bool): learn the shift ``beta`` (else it is 0).
        initial_gamma: initializer of ``gamma``; None fills it with ones.
        initial_beta: initializer of ``beta``; None fills it with zeros.
        axis (int, tuple of ints or None): the axes to normalize over, in
            ascending order. None: axis 0 and the axes after the channel
            axes (for ``x`` of shape ``(N, C, H, W)`` and ``size`` ``C``,
            ``(0, 2, 3)``).
        initial_avg_mean: initializer of ``avg_mean``; None fills it with zeros.
        initial_avg_var: initializer of ``avg_var``; None fills it with ones.

    Attributes:
        gamma (Parameter or None), beta (Parameter or None): the scale and
            shift, of the channel shape.
        avg_mean, avg_var (array or None): the population statistics
            (persistent; None until the size is known).
        N (int): the number of fine-tuning calls since
            :meth:`start_finetuning` (persistent).
        decay (float), eps (float), axis (tuple of ints or None).

    Input ``x`` is floating (it may be float16 with float32 parameters); the
    output has its shape and dtype.

    >>> import numpy
    >>> bn = BatchNormalization(3)
    >>> bn(numpy.arange(6, dtype=numpy.float32).reshape(2, 3)).shape
    (2, 3)
    """

    gamma = None
    beta = None

    def __init__(
        self,
        size=None,
        decay=0.9,
        eps=2e-5,
        dtype=None,
        use_gamma=True,
        use_beta=True,
        initial_gamma=None,
        initial_beta=None,
        axis=None,
        initial_avg_mean=None,
        initial_avg_var=None,
    ):
        super().__init__()
        cls_name = type(self).__name__
        if size is None and axis is None:
            raise ArgumentRuntimeError(f"{cls_name}: size or axis is required, got neither")
        if isinstance(axis, int):
            axis = (axis,)
        self.decay = decay
        self.eps = eps
        self.axis = axis
        self._dtype = get_dtype(dtype, map_mixed16=numpy.float32)
        if self._dtype.kind != "f":
            raise ValueError(f"{cls_name}: dtype must be a floating dtype, got {self._dtype}")
        self._initial_avg_mean = initial_avg_mean
        self._initial_avg_var = initial_avg_var
        self.add_persistent("N", 0)
        self.add_persistent("avg_mean", None)
        self.add_persistent("avg_var", None)
        with self.init_scope():
            if use_gamma:
                self.gamma = Parameter(_typed_initializer(initial_gamma, 1, self._dtype))
            if use_beta:
                self.beta = Parameter(_typed_initializer(initial_beta, 0, self._dtype))
        if size is not None:
            self._initialize_params(size)

    def _initialize_params(self, shape):
        device = self.device
        xp = self.xp
        for name, initial, default in (
            ("avg_mean", self._initial_avg_mean, 0),
            ("avg_var", self._initial_avg_var, 1),
        ):
            if getattr(self, name) is None:
                initializer = _typed_initializer(initial, default, self._dtype)
                setattr(
                    self, name, initializers.generate_array(initializer, shape, xp, device=device)
                )
        self._initial_avg_mean = self._initial_avg_var = None
        for param in (self.gamma, self.beta):
            if param is not None and param.array is None:
                param.initialize(shape)

    def _scale_and_shift(self):
        """``gamma`` and ``beta``, or ones and zeros in their place when not learned."""
        gamma, beta = self.gamma, self.beta
        if gamma is None:
            gamma = self.xp.ones_like(self.avg_mean)
        if beta is None:
            beta = self.xp.zeros_like(self.avg_mean)
        return gamma, beta

    def forward(self, x, **kwargs):
        """forward(x, finetune=False)

        Normalize ``x``.

        Args:
            x (Variable or array): input whose non-normalized axes have the
                channel shape.
            finetune (bool): in training mode, run in fine-tuning mode
                (cumulative averages, see the class docstring).

        Returns:
            Variable: of ``x``'s shape and dtype.
        """
        finetune = _parse_forward_kwargs(type(self).__name__, kwargs) if kwargs else False
        if self.avg_mean is None:
            axis = self.axis
            self._initialize_params(tuple(d for i, d in enumerate(x.shape) if i not in axis))
        gamma, beta = self._scale_and_shift()
        if not config.train:
            return F.fixed_batch_normalization(
                x, gamma, beta, self.avg_mean, self.avg_var, self.eps, axis=self.axis
            )
        if config.in_recomputing:
            return F.batch_normalization(x, gamma, beta, eps=self.eps, axis=self.axis)
        if finetune:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        else:
            decay = self.decay
        return F.batch_normalization(
            x,
            gamma,
            beta,
            eps=self.eps,
            running_mean=self.avg_mean,
            running_var=self.avg_var,
            decay=decay,
            axis=self.axis,
        )

    def start_finetuning(self):
        """Reset ``N``, so that the next fine-tuning calls start new cumulative averages."""
        self.N = 0
