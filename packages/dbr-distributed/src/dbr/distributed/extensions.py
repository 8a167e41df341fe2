"""Trainer extensions for several ranks: global evaluation, persistent averaging."""

import numpy

from dbr.training import PRIORITY_WRITER, Extension

__all__ = [
    "AllreducePersistent",
    "create_multi_node_evaluator",
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
