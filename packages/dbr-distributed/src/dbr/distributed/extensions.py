"""Trainer extensions for several ranks: evaluation, persistent averaging, snapshots."""

import contextlib
import copy
import io
import os
import re
import string
import time
import warnings

import numpy

from dbr.core import Variable, no_backprop_mode
from dbr.core.serializers import load_npz, save_npz
from dbr.datasets import call_converter, concat_examples
from dbr.training import PRIORITY_EDITOR, PRIORITY_WRITER, Extension, get_trigger
from dbr.training.triggers import EarlyStoppingTrigger

__all__ = [
    "AllreducePersistent",
    "GenericMultiNodeEvaluator",
    "MultiNodeEarlyStoppingTrigger",
    "ObservationAggregator",
    "create_multi_node_checkpointer",
    "create_multi_node_evaluator",
    "multi_node_snapshot",
]


def _host_value(value):
    if hasattr(value, "get") and not isinstance(value, numpy.ndarray):
        return value.get()
    return numpy.asarray(value)


def create_multi_node_evaluator(actual_evaluator, communicator):
    """Make ``actual_evaluator`` report the mean over the ranks of every rank's means.

    Each rank evaluates its own share (a scattered dataset of equal lengths
    gives the global mean); then every reported value is summed over the
    ranks with ``allreduce_obj`` and divided by ``size``. The evaluator is
    changed in place and returned.
    """
    local_evaluate = actual_evaluator.evaluate

    def evaluate():
        local = local_evaluate()
        return {
            name: communicator.allreduce_obj(_host_value(value)) / communicator.size
            for name, value in sorted(local.items())
        }

    actual_evaluator.evaluate = evaluate
    return actual_evaluator


def _namedpersistents(model):
    for link_name, link in model.namedlinks():
        for name in sorted(link._persistent):
            yield f"{link_name.rstrip('/')}/{name}", link, name


class AllreducePersistent(Extension):
    """Replace every floating persistent array of ``model`` by its mean over the ranks.

    Meant for BatchNormalization's running statistics, before evaluation or
    a snapshot; integer and non-array persistents are left alone.
    """

    trigger = 1, "epoch"
    priority = PRIORITY_WRITER + 1

    def __init__(self, model, comm):
        self.model = model
        self.comm = comm

    def __call__(self, trainer=None):
        """Average the persistents now."""
        for _, link, name in sorted(_namedpersistents(self.model), key=lambda i: i[0]):
            value = getattr(link, name)
            if getattr(value, "dtype", None) is not None and value.dtype.kind == "f":
                total = self.comm.allreduce(value)
                value[...] = total / self.comm.size


class GenericMultiNodeEvaluator(Extension):
    """Evaluate on every rank's share; hand every result to :meth:`aggregate` on ``root``.

    For evaluations that are not a mean of equal shares (shares of
    different lengths, a metric over all predictions). Each rank runs
    :meth:`calc_local` on each batch of its own ``iterator`` (in
    ``no_backprop_mode``); the results (any non-None picklable values) are
    gathered to ``root`` every round of 8 batches, until every rank's
    iterator is exhausted, and ``aggregate`` gets the list of all of them
    there. Calling the extension returns what ``aggregate`` returns on
    ``root``, None elsewhere. Nothing is reported automatically: report in
    ``aggregate``.

    Args:
        comm: a communicator.
        iterator: this rank's iterator over its test data (not repeating).
        target (callable): the model; the default :meth:`calc_local` calls it.
        device: where the converter sends the arrays (None: left where they are).
        converter: batch to arrays (default :func:`~dbr.datasets.concat_examples`).
        root (int): the rank that aggregates.
        progress_hook (callable): called with each batch on ``root``.
    """

    trigger = 1, "epoch"
    default_name = "validation"
    priority = PRIORITY_WRITER
    name = None
    _gather_interval = 8

    def __init__(
        self,
        comm,
        iterator,
        target,
        device=None,
        converter=concat_examples,
        root=0,
        progress_hook=None,
    ):
        if not 0 <= root < comm.size:
            raise ValueError(
                f"GenericMultiNodeEvaluator: root must be in [0, {comm.size}), got {root}"
            )
        self.comm = comm
        self.iterator = iterator
        self._targets = {"main": target}
        self.converter = converter
        self.device = device
        self.root = root
        self._progress_hook = progress_hook

    def __call__(self, trainer=None):
        """Evaluate every rank's share; return ``aggregate``'s result on ``root``, else None."""
        if hasattr(self.iterator, "reset"):
            self.iterator.reset()
            iterator = self.iterator
        else:
            iterator = copy.copy(self.iterator)
        results = list(self._evaluate(iterator))
        return self.aggregate(results) if self.comm.rank == self.root else None

    def calc_local(self, *args, **kwargs):
        """One batch's result on this rank (not None); by default ``target(*args, **kwargs)``."""
        return self._targets["main"](*args, **kwargs)

    def aggregate(self, results):
        """Combine every rank's results (a list, on ``root`` only); by default return them."""
        return results

    def _local(self, batch):
        in_arrays = call_converter(self.converter, batch, self.device)
        with no_backprop_mode():
            if isinstance(in_arrays, tuple):
                return self.calc_local(*in_arrays)
            if isinstance(in_arrays, dict):
                return self.calc_local(**in_arrays)
            return self.calc_local(in_arrays)

    def _evaluate(self, iterator):
        done = False
        while not done:
            received = False
            for _ in range(self._gather_interval):
                batch = next(iterator, None)
                result = None if batch is None else self._local(batch)
                if batch is not None and self.comm.rank == self.root and self._progress_hook:
                    self._progress_hook(batch)
                gathered = self.comm.gather_obj(result, root=self.root)
                if self.comm.rank == self.root:
                    valid = [r for r in gathered if r is not None]
                    received = received or bool(valid)
                    yield from valid
            done = self.comm.bcast_obj(not received, root=self.root)


def _mean_of_all(histories):
    """The mean of every value in every rank's list."""
    values = [value for history in histories for value in history]
    return sum(values) / len(values)


class ObservationAggregator(Extension):
    """Replace an observed value by an aggregate of every rank's values (default: their mean).

    Each iteration it records this rank's ``trainer.observation[original_key]``
    (when reported; a Variable or a CuPy array is copied to the host first).
    When ``comm_trigger`` fires, rank 0 gathers every rank's records since the
    last exchange, applies ``aggregator`` to the list of those lists, and
    broadcasts the result, which every rank stores as
    ``trainer.observation[aggregated_key]``. Every rank must run it with the
    same trigger.

    Args:
        comm: a communicator.
        original_key (str): the observation to aggregate.
        aggregated_key (str): where the aggregate goes; ``original_key`` when None.
        comm_trigger: when to exchange: a trigger or ``(period, unit)``.
        aggregator (callable): a list (one per rank) of lists of values to the
            aggregate; the mean of all the values when None.
    """

    trigger = 1, "iteration"
    priority = PRIORITY_EDITOR
    name = None

    def __init__(
        self, comm, original_key, aggregated_key=None, *, comm_trigger=(1, "iteration"),
        aggregator=None,
    ):  # fmt: skip
        self.comm = comm
        self.original_key = original_key
        self.aggregated_key = original_key if aggregated_key is None else aggregated_key
        self.comm_trigger = get_trigger(comm_trigger)
        self.aggregator = aggregator or _mean_of_all
        self.observation_history = []

    def compute_summary(self, trainer):
        """Record this iteration's value; at an exchange, return the aggregate (else None)."""
        if self.original_key in trainer.observation:
            value = trainer.observation[self.original_key]
            if isinstance(value, Variable):
                value = Variable(_host_value(value.array), requires_grad=False)
            elif hasattr(value, "dtype"):
                value = _host_value(value)
            self.observation_history.append(value)
        if not self.comm_trigger(trainer):
            return None
        histories = self.comm.gather_obj(self.observation_history)
        self.observation_history = []
        summary = self.aggregator(histories) if self.comm.rank == 0 else None
        return self.comm.bcast_obj(summary)

    def __call__(self, trainer):
        """Record the value; at an exchange, store the aggregate in the observation."""
        summary = self.compute_summary(trainer)
        if summary is not None:
            trainer.observation[self.aggregated_key] = summary


class MultiNodeEarlyStoppingTrigger:
    """:class:`~dbr.training.triggers.EarlyStoppingTrigger` on the mean over every rank.

    At each check, the monitored value is first averaged over the ranks
    (an :class:`ObservationAggregator` storing it as ``monitor + suffix``),
    so that every rank compares the same value and stops at the same time.
    Use it as the trainer's stop trigger on every rank.

    Args:
        comm: a communicator.
        check_trigger, monitor, patience, mode, verbose, max_trigger: as
            EarlyStoppingTrigger's (``patients=`` is accepted for ``patience``).
        suffix (str): appended to ``monitor`` to name the aggregated value.
    """

    def __init__(
        self, comm, *, check_trigger=(1, "epoch"), monitor="main/loss", patience=None,
        mode="auto", verbose=False, max_trigger=(100, "epoch"), suffix="_aggregated", **kwargs,
    ):  # fmt: skip
        aggregated = monitor + suffix
        if patience is not None:
            kwargs["patience"] = patience
        self.actual_trigger = EarlyStoppingTrigger(
            check_trigger=check_trigger, monitor=aggregated, mode=mode, verbose=verbose,
            max_trigger=max_trigger, **kwargs,
        )  # fmt: skip
        self.aggregator = ObservationAggregator(
            comm, monitor, aggregated_key=aggregated, comm_trigger=check_trigger
        )

    def __call__(self, trainer):
        """Aggregate the monitored value, then ask the early-stopping trigger."""
        self.aggregator(trainer)
        return self.actual_trigger(trainer)

    def get_training_length(self):
        """The longest training: ``max_trigger``'s period and unit."""
        return self.actual_trigger.get_training_length()


def _parse_replica_sets(replica_sets, size):
    """The replica sets as a list of disjoint sets covering ``range(size)``."""
    sets = []
    for item in replica_sets:
        members = {item} if isinstance(item, int) else set(item)
        bad = sorted(r for r in members if not (isinstance(r, int) and 0 <= r < size))
        if bad:
            raise ValueError(
                f"multi_node_snapshot: replica_sets name ranks outside [0, {size}): {bad}"
            )
        sets.append(members)
    named = set().union(*sets) if sets else set()
    if sum(len(s) for s in sets) != len(named):
        raise ValueError(f"multi_node_snapshot: replica_sets overlap: {list(replica_sets)!r}")
    rest = set(range(size)) - named
    if rest:
        sets.append(rest)
    return sets


def _has_snapshot(template, outdir):
    """Whether ``outdir`` holds a file that the filename template could have produced."""
    pattern = "".join(
        re.escape(literal) + ("" if field is None else ".+")
        for literal, field, _, _ in string.Formatter().parse(template)
    )
    if not os.path.isdir(outdir):
        return False
    return any(
        re.fullmatch(pattern, name, re.DOTALL) and os.path.isfile(os.path.join(outdir, name))
        for name in os.listdir(outdir)
    )


class _MultiNodeSnapshot(Extension):
    """A snapshot taken by one rank per replica set; made by :func:`multi_node_snapshot`."""

    def __init__(self, comm, snapshot, replica_sets):
        self.comm = comm
        self.snapshot = snapshot
        self.trigger = getattr(snapshot, "trigger", (1, "epoch"))
        self.priority = getattr(snapshot, "priority", PRIORITY_WRITER)
        filename = snapshot.filename
        if callable(filename):
            snapshot.filename = lambda trainer: f"{filename(trainer)}.{comm.rank}"
        else:
            snapshot.filename = f"{filename}.{comm.rank}"
        for members in _parse_replica_sets(replica_sets, comm.size):
            if comm.rank in members:
                self.replica_set = members
                self.master = min(members)

    @property
    def is_master(self):
        """Whether this rank writes (and loads) the snapshot of its replica set."""
        return self.master == self.comm.rank

    def initialize(self, trainer):
        """Autoload on the master of each replica set, then copy the state to its other ranks."""
        if self.is_master:
            self.snapshot.initialize(trainer)
        if not getattr(self.snapshot, "autoload", False):
            return
        target = trainer if self.snapshot._target is None else self.snapshot._target
        others = sorted(self.replica_set - {self.master})
        if self.is_master:
            data = None
            if _has_snapshot(self.snapshot.filename, trainer.out):
                buffer = io.BytesIO()
                save_npz(buffer, target)
                data = buffer.getvalue()
            for rank in others:
                self.comm.send_obj(data, dest=rank)
        else:
            data = self.comm.recv_obj(source=self.master)
            if data is not None:
                load_npz(io.BytesIO(data), target)

    def on_error(self, trainer, exc, tb):
        """Pass the error to the snapshot on the master."""
        if self.is_master:
            self.snapshot.on_error(trainer, exc, tb)

    def __call__(self, trainer):
        """Take the snapshot on the master of each replica set."""
        if self.is_master:
            self.snapshot(trainer)

    def finalize(self):
        """Finalize the snapshot on the master."""
        if self.is_master:
            self.snapshot.finalize()


def multi_node_snapshot(comm, snapshot, replica_sets):
    """Wrap a :func:`~dbr.training.extensions.snapshot` so that one rank per replica set saves.

    A replica set is a group of ranks whose snapshot targets are the same
    (a rank, or an iterable of ranks); the ranks that no set names form one
    more set, so ``[0]`` on 4 ranks means ``[{0}, {1, 2, 3}]``. The lowest
    rank of each set (its master) takes the snapshot, with ``.<rank>``
    appended to the file name; with ``autoload``, the master loads the
    newest one at initialization and sends the loaded state to the rest of
    its set, so a restarted job (even of another size) resumes.

    Args:
        comm: a communicator.
        snapshot: the extension from :func:`dbr.training.extensions.snapshot`.
        replica_sets (list): ranks or iterables of ranks; disjoint.

    Returns:
        Extension: the wrapping extension, with ``snapshot``'s trigger.
    """
    return _MultiNodeSnapshot(comm, snapshot, replica_sets)


class _CheckpointStats:
    """Times of the checkpoints taken on this rank."""

    def __init__(self):
        self.timings = []
        self._begin = None

    def start(self):
        self._begin = time.monotonic()

    def end(self):
        self.timings.append(time.monotonic() - self._begin)

    def report(self):
        if not self.timings:
            return "No checkpoint taken yet"
        return (
            f"Checkpoint durations (s) of {len(self.timings)}: "
            f"mean={sum(self.timings) / len(self.timings):f}, "
            f"min={min(self.timings):f}, max={max(self.timings):f}"
        )


class _MultiNodeCheckpointer(Extension):
    """Per-rank generational checkpoints; made by :func:`create_multi_node_checkpointer`."""

    trigger = 1, "epoch"
    priority = -100

    def __init__(self, name, comm, cp_interval, gc_interval, path):
        self.name = name
        self.comm = comm
        self.cp_interval = cp_interval
        self.gc_interval = gc_interval
        self.path = path
        self.files = []
        self.stats = _CheckpointStats()
        self._failed = False
        if path is not None:
            os.makedirs(path, exist_ok=True)

    def __call__(self, trainer):
        """Checkpoint the trainer at its current iteration (every rank together)."""
        if self.path is None:
            self.path = trainer.out
        self.save(trainer, trainer.updater.iteration)

    def save(self, target, iteration):
        """Write ``target`` to ``<path>/<name>.<rank>.<iteration>`` (atomically); prune old ones.

        Every rank must call it at the same iteration.
        """
        filename = self._filename(iteration)
        os.makedirs(self.path, exist_ok=True)
        self.stats.start()
        save_npz(os.path.join(self.path, filename), target)
        self.stats.end()
        self.files.append(filename)
        if len(self.files) - self.cp_interval > self.gc_interval:
            self._sync_file_list(remove_remainder=True)

    def on_error(self, trainer, exc, tb):
        """Keep the checkpoints: the run raised, and a restarted job resumes from them."""
        self._failed = True

    def finalize(self):
        """Remove this rank's checkpoints if training ended without error (else keep them)."""
        if self._failed:
            return
        for filename in self.files:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(self.path, filename))
        self.files = []

    def get_stats(self):
        """A line on the checkpoint durations of this rank: count, mean, min, max (seconds)."""
        return self.stats.report()

    def _filename(self, iteration):
        return f"{self.name}.{self.comm.rank}.{iteration}"

    def _parse(self, filename):
        """``(rank, iteration)`` of one of this run's checkpoint names, else None."""
        parts = filename.rsplit(".", 2)
        if len(parts) != 3 or parts[0] != self.name:
            return None
        if not (parts[1].isdigit() and parts[2].isdigit()):
            return None
        return int(parts[1]), int(parts[2])

    def _sync_file_list(self, remove_remainder=False):
        """Keep the newest ``cp_interval`` iterations that every rank has a checkpoint of."""
        mine = {self._parse(f)[1] for f in self.files}
        lists = self.comm.gather_obj(mine, root=0)
        common = None
        if self.comm.rank == 0:
            common = sorted(set.intersection(*lists))[-self.cp_interval :]
        common = self.comm.bcast_obj(common, root=0)
        keep = [self._filename(i) for i in common]
        if remove_remainder:
            for filename in set(self.files) - set(keep):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(self.path, filename))
        self.files = keep

    def maybe_load(self, trainer, optimizer=None, path=None):
        """Load the newest checkpoint that every rank has, if any (every rank together).

        Afterwards ``trainer.updater.iteration`` is the checkpoint's (0 if
        none was found). With the multi-node ``optimizer``, a complete
        resume also skips its initial broadcast of rank 0's parameters.
        Once loaded, this rank's checkpoints other than the newest
        ``cp_interval`` that every rank has are removed (older ones, and
        newer ones that another rank lacks), as during a run.
        """
        if self.path is None:
            self.path = path if path is not None else trainer.out
        try:
            names = os.listdir(self.path)
        except FileNotFoundError:
            names = []
        mine = sorted(
            iteration
            for rank, iteration in filter(None, map(self._parse, names))
            if rank == self.comm.rank
        )
        self.files = [self._filename(i) for i in mine]
        self._sync_file_list()
        if not self.files:
            return
        latest = max(self._parse(f)[1] for f in self.files)
        load_npz(os.path.join(self.path, self._filename(latest)), trainer)
        # Loaded: this rank's checkpoints outside the kept ones are superseded,
        # as they would have been removed in the run that wrote them.
        for iteration in sorted(set(mine) - {self._parse(f)[1] for f in self.files}):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(self.path, self._filename(iteration)))
        if optimizer is not None:
            optimizer.needs_broadcast = False


def create_multi_node_checkpointer(name, comm, cp_interval=5, gc_interval=5, path=None):
    """A trainer extension keeping generational per-rank checkpoints, for resuming after a failure.

    Each call writes ``<name>.<rank>.<iteration>`` on every rank (atomically);
    the newest ``cp_interval`` iterations that every rank holds are kept,
    older ones are removed once ``gc_interval`` more have piled up, and all
    are removed when training ends without error. Before ``trainer.run()``,
    ``checkpointer.maybe_load(trainer, optimizer)`` resumes from the newest
    iteration that every rank has a checkpoint of (so a job restarted after
    a rank died continues from the last checkpoint all ranks finished).
    Deprecated in ChainerMN in favour of :func:`multi_node_snapshot`; it
    warns the same way.

    Args:
        name (str): the run's name, the files' prefix.
        comm: a communicator.
        cp_interval (int): how many common checkpoints to keep (> 0).
        gc_interval (int): how many more to allow before removing (> 0).
        path (str or None): the directory (default: the trainer's ``out``).

    Returns:
        Extension: the checkpointer (``maybe_load``, ``save``, ``get_stats``).
    """
    warnings.warn(
        "create_multi_node_checkpointer is deprecated; use multi_node_snapshot",
        DeprecationWarning,
        stacklevel=2,
    )
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"create_multi_node_checkpointer: name must be a non-empty str, got {name!r}"
        )
    for label, value in (("cp_interval", cp_interval), ("gc_interval", gc_interval)):
        if not isinstance(value, int) or value <= 0:
            raise ValueError(
                f"create_multi_node_checkpointer: {label} must be a positive int, got {value!r}"
            )
    return _MultiNodeCheckpointer(name, comm, cp_interval, gc_interval, path)
