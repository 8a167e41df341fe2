"""NumPy references, in float64, of the steps the recurrent links' tests check.

dbr-links' pytest configuration puts this folder on the path, so a test
imports it by name: ``import rnn_reference``.
"""

import numpy


def sigmoid(x):
    """The logistic function ``1 / (1 + exp(-x))``."""
    return 1.0 / (1.0 + numpy.exp(-x))


def linear(sub, v):
    """``v W^T + b`` of the Linear link ``sub`` in float64 (without ``b`` when it has none)."""
    y = v.astype(numpy.float64) @ sub.W.array.astype(numpy.float64).T
    return y if sub.b is None else y + sub.b.array.astype(numpy.float64)


def lstm_gates(link, h, x):
    """The pre-activations ``(a, i, f, o)`` of an LSTM step, each ``(B, out_size)``.

    ``link.upward(x) + link.lateral(h)`` (no lateral term when ``h`` is None),
    its columns interleaved per unit as Chainer's ``lstm`` reads them.
    """
    u = linear(link.upward, x)
    if h is not None:
        u += linear(link.lateral, h)
    u = u.reshape(len(x), -1, 4)
    return tuple(u[:, :, k] for k in range(4))


def lstm_step(link, c, h, x):
    """One LSTM step ``(c, h) -> (c', h')`` of ``link`` (``c`` and ``h`` None mean zeros)."""
    a, i, f, o = lstm_gates(link, h, x)
    c = numpy.zeros_like(a) if c is None else c
    c_new = numpy.tanh(a) * sigmoid(i) + sigmoid(f) * c
    return c_new, sigmoid(o) * numpy.tanh(c_new)
