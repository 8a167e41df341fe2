"""Differentiable collectives: the forward communicates, and so does the backward."""

from dbr.core import FunctionNode

__all__ = ["allreduce"]


class AllreduceSum(FunctionNode):
    """``y = sum over ranks of x``; every rank's gradient is the sum of every rank's ``gy``."""

    def __init__(self, comm):
        self.comm = comm

    def forward(self, inputs):
        (x,) = inputs
        return (self.comm.allreduce(x),)

    def backward(self, indexes, grad_outputs):
        (gy,) = grad_outputs
        return (AllreduceSum(self.comm).apply((gy,))[0],)


def allreduce(comm, x):
    """The elementwise sum over the ranks of every rank's ``x`` (same shape everywhere).

    Differentiable: its backward sums the output gradients over the ranks,
    so every rank must run the backward too, in the same order.

    Args:
        comm: a communicator.
        x (Variable or array): this rank's term.

    Returns:
        Variable: the sum, of ``x``'s shape and dtype.
    """
    return AllreduceSum(comm).apply((x,))[0]
