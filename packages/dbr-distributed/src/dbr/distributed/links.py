"""Links whose computation spans the ranks."""

import numpy

import dbr.functions as F
from dbr.core import Chain, ChainList, Variable, config
from dbr.distributed.communicators import PureNcclCommunicator
from dbr.distributed.functions import allreduce, pseudo_connect, recv, send
from dbr.links import BatchNormalization
from dbr.links.rnn import NStepRNNBase

__all__ = [
    "MultiNodeBatchNormalization",
    "MultiNodeChainList",
    "create_mnbn_model",
    "create_multi_node_n_step_rnn",
]


class MultiNodeBatchNormalization(BatchNormalization):
    """Batch normalization over the batch of every rank together (ChainerMN's MNBN).

    In training mode, the mean and variance are those of the global batch
    (the union of every rank's batch; batch sizes may differ), computed
    with two all-reduces forward and their mirrors backward, so values and
    gradients equal :class:`~dbr.links.BatchNormalization` on the global
    batch. The running averages use the global statistics (the variance
    with Bessel's correction over the global count). Evaluation uses the
    running averages, as BatchNormalization does.

    Args:
        size (int or tuple): the channel shape.
        comm: a communicator.
        decay, eps, dtype, use_gamma, use_beta, initial_gamma, initial_beta:
            as BatchNormalization's.
        communication_backend (str): ``'auto'``, ``'mpi'``, or ``'nccl'`` with a
            communicator that reduces over NCCL (:class:`PureNcclCommunicator`);
            checked as ChainerMN checks it, though the statistics always travel
            through ``comm``.
    """

    def __init__(
        self,
        size,
        comm,
        decay=0.9,
        eps=2e-5,
        dtype=None,
        use_gamma=True,
        use_beta=True,
        initial_gamma=None,
        initial_beta=None,
        communication_backend="auto",
    ):
        super().__init__(
            size,
            decay=decay,
            eps=eps,
            dtype=dtype,
            use_gamma=use_gamma,
            use_beta=use_beta,
            initial_gamma=initial_gamma,
            initial_beta=initial_beta,
        )
        backends = ("auto", "mpi", "nccl") if _uses_nccl(comm) else ("auto", "mpi")
        if communication_backend not in backends:
            raise ValueError(
                f"MultiNodeBatchNormalization: communication_backend must be one of "
                f"{list(backends)} with a {type(comm).__name__}, got {communication_backend!r}"
            )
        self.comm = comm
        self.communication_backend = communication_backend

    def forward(self, x, finetune=False):
        """Normalize ``x`` (batch axis 0, channels next, then any spatial axes) globally."""
        if not config.train:
            return super().forward(x)
        gamma, beta = self._scale_and_shift()
        # The statistics are computed in at least float32 and in the wider of
        # the input's and the parameters' dtypes; the output has the input's.
        out_dtype = x.dtype
        dtype = numpy.result_type(x.dtype, gamma.dtype, numpy.float32)
        if x.dtype != dtype:
            x = F.cast(x, dtype)
        if gamma.dtype != dtype:
            gamma, beta = F.cast(gamma, dtype), F.cast(beta, dtype)
        channels = gamma.ndim
        axes = (0, *range(1 + channels, x.ndim))
        shape = [1] + list(gamma.shape) + [1] * (x.ndim - 1 - channels)
        count = x.size // gamma.size
        total = int(self.comm.allreduce_obj(count))
        mean = allreduce(self.comm, F.sum(x, axis=axes)) / total
        centered = x - F.broadcast_to(F.reshape(mean, shape), x.shape)
        var = allreduce(self.comm, F.sum(centered * centered, axis=axes)) / total
        inv_std = (var + self.eps) ** -0.5
        y = centered * F.broadcast_to(F.reshape(gamma * inv_std, shape), x.shape)
        y = y + F.broadcast_to(F.reshape(beta, shape), x.shape)
        if finetune:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        else:
            decay = self.decay
        adjust = total / max(total - 1, 1)
        self.avg_mean *= decay
        self.avg_mean += ((1 - decay) * mean.array).astype(self.avg_mean.dtype)
        self.avg_var *= decay
        self.avg_var += ((1 - decay) * adjust * var.array).astype(self.avg_var.dtype)
        return y if y.dtype == out_dtype else F.cast(y, out_dtype)


def _uses_nccl(comm):
    return isinstance(comm, PureNcclCommunicator)


def _to_mnbn(link, comm, communication_backend):
    mnbn = MultiNodeBatchNormalization(
        link.avg_mean.shape,
        comm,
        decay=link.decay,
        eps=link.eps,
        dtype=link.avg_mean.dtype,
        use_gamma=link.gamma is not None,
        use_beta=link.beta is not None,
        communication_backend=communication_backend,
    )
    mnbn.copyparams(link)
    mnbn.avg_mean[...] = link.avg_mean
    mnbn.avg_var[...] = link.avg_var
    mnbn.N = link.N
    return mnbn


def _is_plain_bn(link):
    return isinstance(link, BatchNormalization) and not isinstance(
        link, MultiNodeBatchNormalization
    )


def _replace_in_place(link, comm, communication_backend):
    if isinstance(link, Chain):
        for name in sorted(link._children):
            child = getattr(link, name)
            if _is_plain_bn(child):
                delattr(link, name)
                with link.init_scope():
                    setattr(link, name, _to_mnbn(child, comm, communication_backend))
            else:
                _replace_in_place(child, comm, communication_backend)
    elif isinstance(link, ChainList):
        for i, child in enumerate(link._children):
            if _is_plain_bn(child):
                link._children[i] = _to_mnbn(child, comm, communication_backend)
            else:
                _replace_in_place(child, comm, communication_backend)
        link._rename_children()


def create_mnbn_model(link, comm, communication_backend="auto"):
    """A deep copy of ``link`` with every BatchNormalization replaced by a multi-node one.

    Each replacement keeps the original's parameters, running averages,
    ``decay`` and ``eps``.
    """
    if _is_plain_bn(link):
        return _to_mnbn(link, comm, communication_backend)
    copied = link.copy(mode="copy")
    _replace_in_place(copied, comm, communication_backend)
    return copied


def _as_ranks(who, ranks):
    if ranks is None:
        return None
    ranks = [ranks] if isinstance(ranks, int) else list(ranks)
    if not ranks or not all(isinstance(r, int) for r in ranks):
        raise TypeError(
            f"MultiNodeChainList.add_link: {who} must be None, an int or a list of ints, "
            f"got {ranks!r}"
        )
    return ranks


def _first(x):
    """The Variable that stands for ``x`` (a Variable or a tuple of them) as a delegate."""
    return x if isinstance(x, Variable) else x[0]


class MultiNodeChainList(ChainList):
    """A model whose parts run on several processes, joined by :func:`send` and :func:`recv`.

    Each part is a link added with :meth:`add_link`, with the ranks it
    receives its input from (``rank_in``; None: the model's input) and the
    ranks it sends its output to (``rank_out``; None: the part's output is
    the model's output, allowed for one part only). Calling the model runs
    the parts in the order they were added; the backward runs them in the
    reverse order, each exchanging gradients with the same peers. The
    parts are chained through delegate variables, so one ``backward()`` on
    the returned Variable runs every part's backward.

    Every process builds its own MultiNodeChainList of the parts it holds,
    and the ``rank_in``/``rank_out`` of the processes must match
    (a send to rank j in the same order as rank j's receive).

    Args:
        comm: a communicator.

    Returns of a call: the model's output (a part with ``rank_out=None``),
    or, when this process has none, the delegate Variable of its last send,
    to call ``backward()`` on.
    """

    def __init__(self, comm):
        super().__init__()
        self._comm = comm
        self._rank_inouts = []

    def add_link(self, link, rank_in=None, rank_out=None):
        """Add the part ``link``, fed from ``rank_in`` and sending to ``rank_out``.

        Args:
            link (Link): the part.
            rank_in (int, list of int or None): the ranks whose outputs are
                this part's arguments, in order; None: the model's inputs.
            rank_out (int, list of int or None): the ranks this part's output
                goes to; None: it is the model's output.
        """
        rank_in = _as_ranks("rank_in", rank_in)
        rank_out = _as_ranks("rank_out", rank_out)
        if rank_out is None and any(out is None for _, out in self._rank_inouts):
            raise ValueError(
                "MultiNodeChainList.add_link: only one part may have rank_out=None "
                "(the model's output)"
            )
        super().add_link(link)
        self._rank_inouts.append((rank_in, rank_out))

    def forward(self, *inputs):
        """Run every part in order, exchanging with the other processes; see the class doc."""
        local = []  # outputs this process sends to itself, in order
        output = None
        delegate = None
        for index, (part, (rank_in, rank_out)) in enumerate(
            zip(self._children, self._rank_inouts, strict=True)
        ):
            if rank_in is None:
                if index == 0 or delegate is None:
                    x = part(*inputs)
                else:
                    x = part(*pseudo_connect(delegate, *inputs))
            else:
                args = []
                for source in rank_in:
                    if source == self._comm.rank:
                        if not local:
                            raise ValueError(
                                f"MultiNodeChainList: part {index} receives from this "
                                f"process (rank {source}), but no earlier part sent to it"
                            )
                        arg = local.pop(0)
                        if delegate is not None:
                            arg = pseudo_connect(delegate, arg)[0]
                    else:
                        arg = recv(self._comm, source, delegate_variable=delegate)
                    args.append(arg)
                    delegate = _first(arg)
                # The parts before this one are reached through its receives once;
                # a second link to them would run their backward twice.
                delegate = None
                x = part(*args)
            if rank_out is None:
                output = x
                delegate = _first(x)
                continue
            for k, target in enumerate(rank_out):
                if k > 0 and delegate is not None:
                    # Each later send hangs below the earlier one, so that the
                    # backward receives their gradients in the reverse order.
                    x = pseudo_connect(delegate, x)[0]
                if target == self._comm.rank:
                    if k == 0 and delegate is not None:
                        x = pseudo_connect(delegate, x)[0]
                    local.append(x)
                    delegate = x
                else:
                    delegate = send(x, self._comm, target)
        if local:
            raise ValueError(
                "MultiNodeChainList: an output sent to this process was never received; "
                "check that every rank_out has a matching rank_in"
            )
        if output is None:
            return delegate
        if output is delegate or (not isinstance(output, Variable) and _first(output) is delegate):
            return output
        if isinstance(output, Variable):
            return pseudo_connect(delegate, output)[0]
        return pseudo_connect(delegate, *output)


class _MultiNodeNStepRNN(Chain):
    """A stacked RNN whose initial states come from one rank and final states go to another."""

    def __init__(self, link, communicator, rank_in, rank_out):
        if not isinstance(link, NStepRNNBase):
            raise ValueError(
                f"create_multi_node_n_step_rnn: actual_link must be an NStep RNN link "
                f"(NStepLSTM, NStepGRU, NStepRNNTanh, ...), got {type(link).__name__}"
            )
        super().__init__()
        with self.init_scope():
            self.actual_rnn = link
        self.communicator = communicator
        self.rank_in = rank_in
        self.rank_out = rank_out
        self.n_cells = link.n_cells

    def forward(self, *inputs):
        """Run the RNN; return its outputs followed by the delegate of the sends (or None)."""
        cells = [None] * self.n_cells
        if self.rank_in is not None:
            cells = [recv(self.communicator, self.rank_in) for _ in range(self.n_cells)]
        outputs = self.actual_rnn(*cells, *inputs)
        delegate = None
        if self.rank_out is not None:
            states = outputs[:-1]
            cell = states[0]
            for i in range(self.n_cells):
                delegate = send(cell, self.communicator, self.rank_out)
                if i + 1 < self.n_cells:
                    (cell,) = pseudo_connect(delegate, states[i + 1])
        return (*outputs, delegate)


def create_multi_node_n_step_rnn(actual_link, communicator, rank_in=None, rank_out=None):
    """A stacked RNN link for model parallelism: states come from ``rank_in``, go to ``rank_out``.

    The link receives its initial states (``hx``, and ``cx`` for an LSTM)
    from rank ``rank_in`` (None: starts from zeros), runs ``actual_link`` and
    sends its final states to rank ``rank_out`` (None: sends nothing). It
    returns ``actual_link``'s outputs followed by one more value, the
    delegate variable of the sends (None without ``rank_out``): connect it to
    the loss with :func:`~dbr.distributed.functions.pseudo_connect`, so that
    the backward receives the states' gradients from ``rank_out``.

    Args:
        actual_link: an NStep RNN link (``NStepLSTM``, ``NStepBiGRU``, ...).
        communicator: a communicator.
        rank_in (int or None): the rank sending the initial states.
        rank_out (int or None): the rank receiving the final states.

    Returns:
        Chain: the multi-node RNN; ``actual_rnn`` is ``actual_link``.
    """
    return _MultiNodeNStepRNN(actual_link, communicator, rank_in, rank_out)
