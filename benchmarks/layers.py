"""Forward + backward time of the heavy layer functions, against PyTorch on the CPU.

- convolution_2d: x (64, 32, 32, 32), W (64, 32, 3, 3), b (64,), pad 1
- max_pooling_2d: x (64, 32, 32, 32), 2x2 window, stride 2
- batch_normalization: x (64, 32, 32, 32), gamma/beta (32,), training statistics
- n_step_lstm: 2 layers, 256 units, 20 sequences of length 35, input size 256

Each case runs ``forward``, sums the output and backpropagates; the best of
``--repeat`` runs is printed with PyTorch's time and the ratio, each side in its
own ``--runs`` fresh processes (see ``_timing.py``).

Run: ``python benchmarks/layers.py [--repeat 10] [--runs 1] [--torch-threads N]``.
"""

import numpy
from _timing import compare_with_torch, timing_parser

import dbr.functions as F
from dbr.core import Variable

RNG = numpy.random.default_rng(0)


def _f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(numpy.float32)


X = _f32(64, 32, 32, 32)
W = _f32(64, 32, 3, 3, scale=0.05)
B = _f32(64)
GAMMA = numpy.ones(32, numpy.float32)
BETA = numpy.zeros(32, numpy.float32)
LSTM_LAYERS, LSTM_UNITS, LSTM_BATCH, LSTM_STEPS = 2, 256, 20, 35
LSTM_STEPS_INPUT = [_f32(LSTM_BATCH, LSTM_UNITS) for _ in range(LSTM_STEPS)]
LSTM_WS = [
    [_f32(LSTM_UNITS, LSTM_UNITS, scale=0.05) for _ in range(8)] for _ in range(LSTM_LAYERS)
]
LSTM_BS = [[numpy.zeros(LSTM_UNITS, numpy.float32) for _ in range(8)] for _ in range(LSTM_LAYERS)]


def dbr_cases():
    """name -> callable running forward + backward in dbr."""

    def conv():
        x, w, b = Variable(X), Variable(W), Variable(B)
        F.sum(F.convolution_2d(x, w, b, pad=1)).backward()

    def pool():
        x = Variable(X)
        F.sum(F.max_pooling_2d(x, 2, stride=2)).backward()

    def bn():
        x, g, b = Variable(X), Variable(GAMMA), Variable(BETA)
        F.sum(F.batch_normalization(x, g, b)).backward()

    def lstm():
        # F.n_step_lstm takes time steps: xs[t] is (batch, in).
        xs = [Variable(x) for x in LSTM_STEPS_INPUT]
        ws = [[Variable(w) for w in layer] for layer in LSTM_WS]
        bs = [[Variable(b) for b in layer] for layer in LSTM_BS]
        hx = Variable(numpy.zeros((LSTM_LAYERS, LSTM_BATCH, LSTM_UNITS), numpy.float32))
        cx = Variable(numpy.zeros((LSTM_LAYERS, LSTM_BATCH, LSTM_UNITS), numpy.float32))
        _, _, ys = F.n_step_lstm(LSTM_LAYERS, 0.0, hx, cx, ws, bs, xs)
        F.sum(F.stack(ys)).backward()

    return {
        "convolution_2d": conv,
        "max_pooling_2d": pool,
        "batch_normalization": bn,
        "n_step_lstm": lstm,
    }


def torch_cases(torch):
    """The same computations in PyTorch."""
    fn = torch.nn.functional

    def conv():
        x = torch.from_numpy(X).requires_grad_()
        w = torch.from_numpy(W).requires_grad_()
        b = torch.from_numpy(B).requires_grad_()
        fn.conv2d(x, w, b, padding=1).sum().backward()

    def pool():
        x = torch.from_numpy(X).requires_grad_()
        fn.max_pool2d(x, 2, stride=2).sum().backward()

    def bn():
        x = torch.from_numpy(X).requires_grad_()
        g = torch.from_numpy(GAMMA).requires_grad_()
        b = torch.from_numpy(BETA).requires_grad_()
        fn.batch_norm(x, None, None, g, b, training=True, eps=2e-5).sum().backward()

    lstm_module = torch.nn.LSTM(LSTM_UNITS, LSTM_UNITS, LSTM_LAYERS)
    packed_input = torch.from_numpy(numpy.stack(LSTM_STEPS_INPUT))

    def lstm():
        x = packed_input.clone().requires_grad_()
        y, _ = lstm_module(x)
        y.sum().backward()

    return {
        "convolution_2d": conv,
        "max_pooling_2d": pool,
        "batch_normalization": bn,
        "n_step_lstm": lstm,
    }


def main():
    args = timing_parser(__doc__, 10).parse_args()
    title = f"forward + backward, float32, best of {args.repeat} (ms)"
    compare_with_torch(args, title, "function", dbr_cases, torch_cases, width=10, digits=2)


if __name__ == "__main__":
    main()
