"""NStepRNNBase, the machinery of the n-step links, and the Elman RNN links built on it."""

import numbers

import numpy

import dbr.functions as F
from dbr.core import ChainList, Link, Parameter, Variable, initializers

_REMOVED_INIT_KWARGS = {
    "use_cudnn": "use dbr.core.using_config('use_cudnn', ...) instead",
    "use_bi_direction": "choose the Bi link class instead",
    "activation": "choose the Tanh or ReLU link class instead",
}


def _reject_kwargs(who, kwargs, removed):
    """Raise for Chainer's removed arguments (ValueError) and unknown ones (TypeError)."""
    for name, advice in removed.items():
        if name in kwargs:
            raise ValueError(f"{who}: the {name} argument is not supported anymore; {advice}")
    raise TypeError(f"{who}: got an unexpected keyword argument {next(iter(kwargs))!r}")


def _check_size(who, arg, value, allow_none=False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        expected = "a positive int or None" if allow_none else "a positive int"
        raise ValueError(f"{who}: expected {arg} to be {expected}, got {value!r}")


class NStepRNNBase(ChainList):
    """Base of the stacked (bi-)directional recurrent links over variable-length sequences.

    The link is a :class:`~dbr.core.ChainList` of one plain :class:`~dbr.core.Link`
    per layer and direction (child ``layer * direction + d``, ``d`` 0 for the
    forward direction and 1 for the backward one), each holding the
    parameters ``w0`` ... ``w{n-1}`` and ``b0`` ... ``b{n-1}`` with ``n`` the
    class's :attr:`n_weights`. The first half of the weights act on the
    layer's input, of shape ``(out_size, in_size)`` in the first layer and
    ``(out_size, direction * out_size)`` in the others; the second half act on
    the hidden state, of shape ``(out_size, out_size)``. Every bias is
    ``(out_size,)``-shaped.

    Calling the link sorts the sequences by decreasing length, transposes
    them into time steps, runs :meth:`rnn` (a function of
    :mod:`dbr.functions` such as :func:`~dbr.functions.n_step_lstm`) and
    puts the outputs back in the order of the inputs. Subclasses set
    :attr:`n_weights` and :attr:`use_bi_direction` and implement :meth:`rnn`.

    Args:
        n_layers (int): the number of layers ``S``.
        in_size (int or None): the size ``I`` of the input vectors; None
            infers it from the first input (the input weights of the first
            layer stay uninitialized until then).
        out_size (int): the size ``N`` of the hidden states and outputs.
        dropout (float): the dropout ratio applied, in training mode, to the
            input of every layer after the first, in ``[0, 1)``.
        initialW: initializer of every weight (an initializer, a scalar or
            an array); None uses :class:`~dbr.core.initializers.LeCunNormal`.
        initial_bias: initializer of every bias; None fills them with zeros.

    Attributes:
        n_layers (int), out_size (int), dropout (float): as given.
        direction (int): 1, or 2 for a bi-directional link.
        ws (list of lists of Parameters), bs (list of lists of Parameters):
            ``ws[k][j]`` is ``self[k].w{j}``, as :meth:`rnn` takes them.

    Raises:
        ValueError: a size is not a positive int, ``dropout`` is not in
            ``[0, 1)``, or a removed argument (``use_cudnn``,
            ``use_bi_direction``, ``activation``) is given.
        TypeError: an unknown keyword argument is given.
    """

    #: The number of weight matrices (and of biases) of each layer and direction.
    n_weights = 2
    #: True for the links that run each layer in both directions.
    use_bi_direction = False

    def __init__(
        self, n_layers, in_size, out_size, dropout, *, initialW=None, initial_bias=None, **kwargs
    ):
        who = type(self).__name__
        if kwargs:
            _reject_kwargs(who, kwargs, _REMOVED_INIT_KWARGS)
        _check_size(who, "n_layers", n_layers)
        _check_size(who, "in_size", in_size, allow_none=True)
        _check_size(who, "out_size", out_size)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real):
            raise TypeError(f"{who}: expected dropout to be a float, got {dropout!r}")
        if not 0 <= dropout < 1:
            raise ValueError(f"{who}: expected dropout in [0, 1), got {dropout!r}")

        direction = 2 if self.use_bi_direction else 1
        w_init = initializers.get_initializer(initialW)
        b_init = initializers.get_initializer(0 if initial_bias is None else initial_bias)
        n_weights = self.n_weights
        half = n_weights // 2
        layers = []
        for layer in range(n_layers):
            n_in = in_size if layer == 0 else out_size * direction
            for _ in range(direction):
                link = Link()
                with link.init_scope():
                    for j in range(n_weights):
                        width = n_in if j < half else out_size
                        shape = None if width is None else (out_size, width)
                        setattr(link, f"w{j}", Parameter(w_init, shape))
                        setattr(link, f"b{j}", Parameter(b_init, out_size))
                layers.append(link)
        super().__init__(*layers)
        self.n_layers = n_layers
        self.dropout = dropout
        self.out_size = out_size
        self.direction = direction

    @property
    def ws(self):
        """The weights as :meth:`rnn` takes them: ``ws[k][j]`` is ``self[k].w{j}``."""
        names = [f"w{j}" for j in range(self.n_weights)]
        return [[getattr(layer, name) for name in names] for layer in self]

    @property
    def bs(self):
        """The biases as :meth:`rnn` takes them: ``bs[k][j]`` is ``self[k].b{j}``."""
        names = [f"b{j}" for j in range(self.n_weights)]
        return [[getattr(layer, name) for name in names] for layer in self]

    @property
    def n_cells(self):
        """The number of state arrays the recurrence carries: 1 (``h``), or 2 for LSTMs."""
        return 1

    def rnn(self, *args):
        """Run the :mod:`dbr.functions` n-step function of the link on ``args``.

        ``args`` are ``(n_layers, dropout, hx[, cx], ws, bs, xs)`` with ``xs``
        transposed into time steps; subclasses implement it.
        """
        raise NotImplementedError(f"{type(self).__name__}.rnn: implemented by subclasses")

    def _initialize_params(self, in_size):
        half = self.n_weights // 2
        shape = (self.out_size, in_size)
        for d in range(self.direction):
            layer = self[d]
            for j in range(half):
                getattr(layer, f"w{j}").initialize(shape)

    def init_hx(self, xs):
        """Zero initial states for the sequences ``xs``.

        Returns:
            Variable: zeros of shape ``(direction * n_layers, len(xs), out_size)``
            and the dtype of ``xs[0]``, on the link's device.
        """
        shape = (self.n_layers * self.direction, len(xs), self.out_size)
        return Variable(self.xp.zeros(shape, dtype=xs[0].dtype), requires_grad=False)

    def forward(self, hx, xs, **kwargs):
        """Run the link over the sequences ``xs``.

        Args:
            hx (Variable, array or None): the initial hidden states, of shape
                ``(direction * S, B, N)`` with ``B = len(xs)`` (row ``b`` for
                ``xs[b]``); None means zeros.
            xs (list or tuple of Variables or arrays): the ``B`` sequences,
                ``xs[b]`` of shape ``(L_b, I)``, in any order of lengths, of the
                parameters' dtype.

        Returns:
            tuple: ``(hy, ys)``: the final hidden states (of ``hx``'s shape;
            the backward direction ends at the first element of each
            sequence) and the list of the last layer's outputs, ``ys[b]`` of
            shape ``(L_b, direction * N)``.
        """
        (hy,), ys = self._call((hx,), xs, kwargs)
        return hy, ys

    def _call(self, hs, xs, kwargs):
        """Sort ``xs``, run :meth:`rnn` with the initial states ``hs``, unsort the results.

        Returns:
            tuple: ``(hys, ys)``: the final states, one per element of ``hs``,
            and the list of outputs.
        """
        if kwargs:
            _reject_kwargs(
                f"{type(self).__name__}.forward",
                kwargs,
                {"train": "use dbr.core.using_config('train', ...) instead"},
            )
        if not isinstance(xs, (list, tuple)) or not xs:
            raise TypeError(
                f"{type(self).__name__}.forward: expected xs to be a non-empty list of "
                f"Variables or arrays, got {xs!r}"
            )
        if self[0].w0.array is None:
            self._initialize_params(xs[0].shape[1])

        lengths = [len(x) for x in xs]
        order = numpy.argsort([-n for n in lengths], kind="stable")
        permuted = any(i != k for k, i in enumerate(order.tolist()))
        if permuted:
            xs = [xs[i] for i in order]
            indices = self.device.send_array(order.astype(numpy.int32))
        states = []
        for h in hs:
            if h is None:
                h = self.init_hx(xs)
            elif permuted:
                h = F.permutate(h, indices, axis=1)
            states.append(h)

        result = self.rnn(
            self.n_layers, self.dropout, *states, self.ws, self.bs, F.transpose_sequence(xs)
        )
        ys = F.transpose_sequence(result[-1])
        hys = result[:-1]
        if permuted:
            hys = [F.permutate(h, indices, axis=1, inv=True) for h in hys]
            unsorted = [None] * len(ys)
            for k, i in enumerate(order):
                unsorted[i] = ys[k]
            ys = unsorted
        return list(hys), list(ys)


class NStepRNNTanh(NStepRNNBase):
    """Stacked uni-directional Elman RNN with ``tanh`` over variable-length sequences.

    Each layer computes ``h_t = tanh(W_0 x_t + W_1 h_{t-1} + b_0 + b_1)``
    (see :func:`dbr.functions.n_step_rnn`). Unlike the function, the link
    takes the sequences in any order and untransposed.

    Args:
        n_layers (int), in_size (int or None), out_size (int), dropout (float),
        initialW, initial_bias: as for :class:`NStepRNNBase`.

    >>> import numpy as np
    >>> rnn = NStepRNNTanh(2, 3, 4, 0.0)
    >>> hy, ys = rnn(None, [np.ones((2, 3), np.float32), np.ones((5, 3), np.float32)])
    >>> hy.shape, [y.shape for y in ys]
    ((2, 2, 4), [(2, 4), (5, 4)])
    """

    n_weights = 2
    use_bi_direction = False

    def rnn(self, *args):
        """:func:`dbr.functions.n_step_rnn` with ``activation='tanh'``."""
        return F.n_step_rnn(*args, activation="tanh")


class NStepRNNReLU(NStepRNNBase):
    """Stacked uni-directional Elman RNN with ReLU over variable-length sequences.

    Each layer computes ``h_t = relu(W_0 x_t + W_1 h_{t-1} + b_0 + b_1)``
    (see :func:`dbr.functions.n_step_rnn`).

    Args:
        n_layers (int), in_size (int or None), out_size (int), dropout (float),
        initialW, initial_bias: as for :class:`NStepRNNBase`.

    >>> import numpy as np
    >>> rnn = NStepRNNReLU(1, None, 4, 0.0)
    >>> hy, ys = rnn(None, [np.ones((3, 2), np.float32)])
    >>> rnn[0].w0.shape, hy.shape, ys[0].shape
    ((4, 2), (1, 1, 4), (3, 4))
    """

    n_weights = 2
    use_bi_direction = False

    def rnn(self, *args):
        """:func:`dbr.functions.n_step_rnn` with ``activation='relu'``."""
        return F.n_step_rnn(*args, activation="relu")


class NStepBiRNNTanh(NStepRNNBase):
    """Stacked bi-directional Elman RNN with ``tanh`` over variable-length sequences.

    Each layer runs the recurrence of :class:`NStepRNNTanh` forward and
    backward in time with separate weights and concatenates the two outputs
    (see :func:`dbr.functions.n_step_birnn`).

    Args:
        n_layers (int), in_size (int or None), out_size (int), dropout (float),
        initialW, initial_bias: as for :class:`NStepRNNBase`.

    >>> import numpy as np
    >>> rnn = NStepBiRNNTanh(1, 3, 4, 0.0)
    >>> hy, ys = rnn(None, [np.ones((2, 3), np.float32)])
    >>> hy.shape, ys[0].shape
    ((2, 1, 4), (2, 8))
    """

    n_weights = 2
    use_bi_direction = True

    def rnn(self, *args):
        """:func:`dbr.functions.n_step_birnn` with ``activation='tanh'``."""
        return F.n_step_birnn(*args, activation="tanh")


class NStepBiRNNReLU(NStepRNNBase):
    """Stacked bi-directional Elman RNN with ReLU over variable-length sequences.

    Each layer runs the recurrence of :class:`NStepRNNReLU` forward and
    backward in time with separate weights and concatenates the two outputs
    (see :func:`dbr.functions.n_step_birnn`).

    Args:
        n_layers (int), in_size (int or None), out_size (int), dropout (float),
        initialW, initial_bias: as for :class:`NStepRNNBase`.

    >>> import numpy as np
    >>> rnn = NStepBiRNNReLU(2, 3, 4, 0.0)
    >>> rnn[2].w0.shape
    (4, 8)
    """

    n_weights = 2
    use_bi_direction = True

    def rnn(self, *args):
        """:func:`dbr.functions.n_step_birnn` with ``activation='relu'``."""
        return F.n_step_birnn(*args, activation="relu")
