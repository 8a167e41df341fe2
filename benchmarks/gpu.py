"""Milliseconds per training iteration and peak memory on a GPU, dbr against PyTorch.

dbr runs on ``--device`` (``'@cupy:0'`` by default) and PyTorch on the same GPU:

- mlp-b100, mlp-b1000: the MNIST MLP 784-1000-1000-10 with ReLU, softmax cross
  entropy and Adam, batch 100 and batch 1000 (targets 1.5x and 1.2x).
- lenet5: LeNet-5 with ReLU as in ``end_to_end.py``, Adam, batch 128 (1.3x).
- resnet18: a ResNet-18-style CIFAR network (3x3 stem of 64 channels, BasicBlocks
  [2, 2, 2, 2] of 64/128/256/512 channels with batch normalization, the last three
  stages starting with stride 2, global average pooling, linear classifier) on
  float32 3x32x32 images, MomentumSGD (lr 0.05, momentum 0.9), batch 128 (1.3x).
- lstm: the language model of Chainer's PTB example: EmbedID over 10,000 words,
  two stacked 650-unit LSTMs, dropout 0.5 before each LSTM and the output, a
  linear layer back to the vocabulary, 20 parallel streams; one iteration is
  truncated BPTT over 35 steps (losses summed, backward, ``unchain_backward``),
  SGD (lr 1) with gradient-norm clipping at 5 (1.5x). PyTorch steps
  ``nn.LSTMCell`` the same way.

Both sides start from dbr's initial weights and train on the same synthetic
inputs, drawn once with NumPy and copied to the device before anything is
timed. After warm-up iterations each repeat times ``--iterations`` iterations
between two device synchronisations; the table gives the median of the
repeats in ms per iteration, and the ratio dbr / PyTorch against its target.
Peak memory is measured afterwards over a few more iterations of the same
step: for dbr the peak of bytes in use in CuPy's memory pool (a CuPy memory
hook adds and subtracts each block handed out and given back; it is not
installed while timing, so its Python callbacks cost the timings nothing),
for PyTorch ``torch.cuda.max_memory_allocated``; the target is 1.3x. PyTorch
runs in strict float32 (TF32 off for matmul and cuDNN), as dbr does.

Without CuPy or a usable GPU the script prints why and exits 0; without a CUDA
build of PyTorch it times dbr alone. ``--device @numpy`` runs dbr on the CPU
against PyTorch on the CPU (no memory figures), which checks the harness on a
machine without a GPU. The exit status is 1 when a case failed (its traceback
is on stderr and its cell says ``error``).

Run: ``python benchmarks/gpu.py [--cases mlp-b100 lstm] [--iterations 20]
[--repeats 5] [--quick] [--device @cupy:0] [--out gpu-benchmark.md]``.
"""

import argparse
import dataclasses
import gc
import pathlib
import statistics
import sys
import time
import traceback

import numpy
from end_to_end import MLP, LeNet5

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, ChainList, backend, config
from dbr.core.serializers import write_atomically
from dbr.training import optimizer_hooks, optimizers

# The residual blocks are the CIFAR example's, examples/convnet/train_cifar.py.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "convnet"))
from train_cifar import BasicBlock, ConvBN  # noqa: E402

MIB = 2**20
N_CLASSES = 10
N_VOCAB = 10000
N_UNITS = 650
BPTT = 35
MEMORY_TARGET = 1.3


class ResNet18(Chain):
    """ResNet-18 for 32x32 images: a 64-channel ConvBN stem, four stages of two
    BasicBlocks (64, 128, 256, 512 channels; stages 2-4 start with stride 2), global
    average pooling and a linear classifier."""

    WIDTHS = (64, 128, 256, 512)

    def __init__(self, n_classes=N_CLASSES):
        super().__init__()
        with self.init_scope():
            self.stem = ConvBN(3, self.WIDTHS[0])
            self.blocks = ChainList()
            in_channels = self.WIDTHS[0]
            for stage, width in enumerate(self.WIDTHS):
                for i in range(2):
                    stride = 2 if stage > 0 and i == 0 else 1
                    self.blocks.append(BasicBlock(in_channels, width, stride))
                    in_channels = width
            self.fc = L.Linear(in_channels, n_classes)

    def forward(self, x):
        """Class scores (batch, n_classes) for float32 images (batch, 3, 32, 32)."""
        h = F.relu(self.stem(x))
        for block in self.blocks:
            h = block(h)
        return self.fc(F.average_pooling_2d(h, h.shape[2:]))


class RNNLM(Chain):
    """The PTB example's language model: EmbedID, two stacked LSTMs, a Linear layer to
    the vocabulary, dropout before each LSTM and the output; every parameter starts
    uniform in [-0.1, 0.1]."""

    def __init__(self, n_vocab=N_VOCAB, n_units=N_UNITS, dropout=0.5):
        super().__init__()
        self.dropout = dropout
        with self.init_scope():
            self.embed = L.EmbedID(n_vocab, n_units)
            self.rnn = ChainList(*[L.LSTM(n_units, n_units) for _ in range(2)])
            self.out = L.Linear(n_units, n_vocab)
        for param in self.params():
            param.array[...] = numpy.random.uniform(-0.1, 0.1, param.shape)

    def forward(self, x):
        """Next-word scores (batch, n_vocab) for int32 word ids ``x`` of shape (batch,)."""
        h = self.embed(x)
        for lstm in self.rnn:
            h = lstm(F.dropout(h, self.dropout))
        return self.out(F.dropout(h, self.dropout))


@dataclasses.dataclass(frozen=True)
class Case:
    """One benchmark: the dbr network, the batch, one example's shape and the time target
    (dbr / PyTorch)."""

    make_model: type
    batch: int
    example_shape: tuple
    target: float


CASES = {
    "mlp-b100": Case(MLP, 100, (784,), 1.5),
    "mlp-b1000": Case(MLP, 1000, (784,), 1.2),
    "lenet5": Case(LeNet5, 128, (1, 28, 28), 1.3),
    "resnet18": Case(ResNet18, 128, (3, 32, 32), 1.3),
    "lstm": Case(RNNLM, 20, (), 1.5),
}
QUICK_CASES = ("mlp-b100", "lenet5")


def make_inputs(name, case):
    """NumPy inputs and int32 labels of a case: images (batch, *shape) float32 in [0, 1)
    with class labels, or for lstm word ids and next words of shape (BPTT, batch)."""
    rng = numpy.random.default_rng(0)
    if name == "lstm":
        words = rng.integers(0, N_VOCAB, (2, BPTT, case.batch)).astype(numpy.int32)
        return words[0], words[1]
    x = rng.random((case.batch, *case.example_shape), dtype=numpy.float32)
    return x, rng.integers(0, N_CLASSES, case.batch).astype(numpy.int32)


def dbr_step(name, model, x, t):
    """One training iteration of ``model`` on the device arrays ``x``, ``t``: ``step()``."""
    if name == "lstm":
        optimizer = optimizers.SGD(lr=1.0).setup(model)
        optimizer.add_hook(optimizer_hooks.GradientClipping(5.0))

        def bptt_step():
            loss = 0
            for i in range(len(x)):
                loss += F.softmax_cross_entropy(model(x[i]), t[i])
            model.cleargrads()
            loss.backward()
            loss.unchain_backward()
            optimizer.update()

        return bptt_step
    if name == "resnet18":
        optimizer = optimizers.MomentumSGD(lr=0.05, momentum=0.9).setup(model)
    else:
        optimizer = optimizers.Adam().setup(model)

    def step():
        loss = F.softmax_cross_entropy(model(x), t)
        model.cleargrads()
        loss.backward()
        optimizer.update()

    return step


def median_ms(step, synchronize, iterations, repeats):
    """(median ms per iteration, median host ms per iteration) over ``repeats`` repeats of
    ``iterations`` calls of ``step``, each repeat timed between two calls of
    ``synchronize``. The host figure stops before the closing synchronisation: the time
    Python takes to issue the work. Close to the first figure, the step is bound by the
    host (interpreter and launches); well below it, by the device's kernels."""
    times, host_times = [], []
    for _ in range(repeats):
        synchronize()
        start = time.perf_counter()
        for _ in range(iterations):
            step()
        issued = time.perf_counter()
        synchronize()
        end = time.perf_counter()
        times.append((end - start) / iterations)
        host_times.append((issued - start) / iterations)
    return statistics.median(times) * 1e3, statistics.median(host_times) * 1e3


def cupy_peak_bytes(cupy, pool, step, iterations, synchronize):
    """Peak bytes in use in the CuPy memory ``pool`` while ``step`` runs ``iterations``
    times (then ``synchronize()``): the bytes in use when it starts, plus each block the
    pool hands out, minus each block given back."""

    class PeakUsage(cupy.cuda.MemoryHook):
        name = "dbr_benchmark_peak_usage"

        def __init__(self):
            self.used = self.peak = pool.used_bytes()

        def malloc_postprocess(self, **kwargs):
            self.used += kwargs["mem_size"]
            self.peak = max(self.peak, self.used)

        def free_postprocess(self, **kwargs):
            self.used -= kwargs["mem_size"]

    hook = PeakUsage()
    with hook:
        for _ in range(iterations):
            step()
        synchronize()
    if hook.used != pool.used_bytes():
        print(
            f"warning: the memory hook counted {hook.used} bytes in use at the end, "
            f"the pool says {pool.used_bytes()}",
            file=sys.stderr,
        )
    return hook.peak


class DbrSide:
    """dbr on a Device: prepares the cases there and measures their memory.

    The CPU-built model is moved to the device with ``to_device`` and the inputs
    with ``Device.send``; on a GPU, memory is read from dbr.gpu's memory pool.
    """

    label = "dbr"

    def __init__(self, device):
        self.device = device
        self.cupy = None if device.xp is numpy else device.xp
        self.synchronize = _nothing
        if self.cupy is not None:
            from dbr.gpu import memory

            self.memory = memory
            self.synchronize = self.cupy.cuda.Device(device.device_id).synchronize

    def describe(self):
        """A line naming dbr's device."""
        if self.cupy is None:
            return f"dbr on {self.device} (NumPy {numpy.__version__})"
        from dbr.gpu import cudnn

        props = self.cupy.cuda.runtime.getDeviceProperties(self.device.device_id)
        gpu = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        convolutions = "cuDNN" if cudnn.available() else f"im2col ({cudnn.unavailable_reason()})"
        return (
            f"dbr on {self.device} ({gpu}, CuPy {self.cupy.__version__}, "
            f"use_cudnn={config.use_cudnn!r}, convolutions through {convolutions})"
        )

    def prepare(self, name, model, inputs):
        """The training iteration ``step()`` of case ``name`` for the CPU-built ``model``."""
        model.to_device(self.device)
        x, t = self.device.send(inputs)
        return dbr_step(name, model, x, t)

    def peak_mib(self, step, iterations):
        """Peak MiB in use in the memory pool over ``iterations`` steps (None on the CPU)."""
        if self.cupy is None:
            return None
        pool = self.memory.memory_pool()
        return cupy_peak_bytes(self.cupy, pool, step, iterations, self.synchronize) / MIB

    def release(self):
        """Give the memory of the finished case back to the device."""
        gc.collect()
        if self.cupy is not None:
            self.synchronize()
            self.memory.free_all_blocks(device=self.device)


def _nothing():
    return None


def gpu_unavailable():
    """Why dbr cannot run on a GPU, or None when it can."""
    try:
        import dbr.gpu
    except ImportError as e:
        return f"dbr.gpu is not importable ({e}); install dbr-gpu with a CUDA extra"
    if not dbr.gpu.available:
        return dbr.gpu.unavailable_reason
    return None


def load_torch_side(device):
    """(the PyTorch side for dbr's ``device``, or None; a line saying which or why not)."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed: dbr alone"
    on_gpu = device.xp is not numpy
    if on_gpu and not torch.cuda.is_available():
        return None, f"torch {torch.__version__} cannot use CUDA here: dbr alone"
    import _torch_side

    torch_device = f"cuda:{device.device_id}" if on_gpu else "cpu"
    side = _torch_side.TorchSide(torch_device)
    return side, side.describe()


def ratio_cells(ours, theirs, target):
    """The ratio and target cells of one measure (either figure may be None or an error)."""
    if not isinstance(ours, float) or not isinstance(theirs, float):
        return "-", f"{target}x"
    ratio = ours / theirs
    verdict = "met" if ratio <= target else "missed"
    return f"{ratio:.2f}x", f"{target}x {verdict}"


def cell(value, digits):
    """A figure with ``digits`` decimals, or '-' / 'error'."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"{value:.{digits}f}"


COLUMNS = (
    "case",
    "batch",
    "dbr ms",
    "torch ms",
    "ratio",
    "target",
    "dbr peak MiB",
    "torch peak MiB",
    "memory ratio",
    "memory target",
    "dbr host ms",
    "torch host ms",
)


def table_row(name, case, ours, theirs):
    """A Markdown table row from dbr's and PyTorch's (ms, peak MiB, host ms) of one case."""
    ratio, target = ratio_cells(ours[0], theirs[0], case.target)
    memory_ratio, memory_target = ratio_cells(ours[1], theirs[1], MEMORY_TARGET)
    if ours[1] is None and theirs[1] is None:
        memory_target = "-"
    cells = (name, str(case.batch), cell(ours[0], 2), cell(theirs[0], 2), ratio, target)
    cells += (cell(ours[1], 1), cell(theirs[1], 1), memory_ratio, memory_target)
    cells += (cell(ours[2], 2), cell(theirs[2], 2))
    return "| " + " | ".join(cells) + " |"


def _warmed_up(side, name, case, inputs, args):
    """(model, step) of case ``name`` on one side, the step called ``args.warmup`` times."""
    numpy.random.seed(0)
    model = case.make_model()
    step = side.prepare(name, model, inputs)
    for _ in range(args.warmup):
        step()
    return model, step


def measure(side, name, case, inputs, args):
    """(ms per iteration, peak MiB or None, host ms per iteration) of case ``name`` on
    one side, or ('error', 'error', 'error') after printing the traceback."""
    model = step = None
    try:
        model, step = _warmed_up(side, name, case, inputs, args)
        ms, host_ms = median_ms(step, side.synchronize, args.iterations, args.repeats)
        return ms, side.peak_mib(step, args.memory_iterations), host_ms
    except Exception:
        print(f"{name} failed on the {side.label} side:", file=sys.stderr)
        traceback.print_exc()
        return "error", "error", "error"
    finally:
        del model, step
        side.release()


def profile(side, name, case, inputs, args):
    """What one side's step of case ``name`` spends its time on, as text.

    Over ``args.iterations`` iterations after warm-up: for dbr, the ``args.profile``
    functions with the most own time (cProfile); on a GPU with a CUDA build of
    PyTorch, for either side, the kernels with the most GPU time and, per
    iteration, the GPU time of all kernels, kernel launches, synchronisations and
    memory copies, read from CUPTI through ``torch.profiler`` (which sees every
    kernel of the process, CuPy's and cuDNN's included).
    """
    model = step = None
    try:
        model, step = _warmed_up(side, name, case, inputs, args)
        side.synchronize()
        text = ""
        if side.label == "dbr":
            text += _cprofile_text(step, side.synchronize, args)
        if side.synchronize is not _nothing:
            text += _kernel_text(step, side.synchronize, args)
        return f"### profile of {side.label}'s {name}, {args.iterations} iteration(s)\n{text}"
    finally:
        del model, step
        side.release()


def _cprofile_text(step, synchronize, args):
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(args.iterations):
        step()
    synchronize()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(args.profile)
    return out.getvalue()


def _kernel_text(step, synchronize, args):
    try:
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as torch_profile
    except ImportError:
        return "(no kernel profile: PyTorch is not installed)\n"
    with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(args.iterations):
            step()
        synchronize()
    averages = prof.key_averages()

    def device_us(event):
        return getattr(event, "self_device_time_total", None) or getattr(
            event, "self_cuda_time_total", 0
        )

    def calls(*words):
        return sum(e.count for e in averages if any(w in e.key for w in words))

    n = args.iterations
    kernels = sorted((e for e in averages if device_us(e) > 0), key=device_us, reverse=True)
    lines = [
        f"per iteration: {sum(map(device_us, kernels)) / n / 1e3:.2f} ms of GPU kernels, "
        f"{calls('LaunchKernel') / n:.0f} kernel launches, "
        f"{calls('Synchronize') / n:.1f} synchronisations, {calls('Memcpy') / n:.1f} copies",
        f"{'GPU ms/iter':>12} {'calls/iter':>10}  kernel",
    ]
    for e in kernels[: args.profile]:
        lines.append(f"{device_us(e) / n / 1e3:>12.3f} {e.count / n:>10.1f}  {e.key[:110]}")
    return "\n".join(lines) + "\n"


def write_report(path, text):
    """Write ``text`` to ``path`` atomically (dbr.core's temporary file and rename)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, lambda temporary: pathlib.Path(temporary).write_text(text))


def memory_line(ours, args):
    """How the memory columns were measured."""
    if ours.cupy is None:
        return "not measured on the CPU"
    return (
        f"over {args.memory_iterations} more iteration(s); dbr: bytes in use in CuPy's "
        "memory pool, torch: max_memory_allocated"
    )


def parse_args(argv):
    """The command line (see the module docstring); --quick sets the small counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=tuple(CASES), help="default: all")
    parser.add_argument("--iterations", type=int, help="iterations per repeat (default 20)")
    parser.add_argument("--repeats", type=int, help="timed repeats (default 5)")
    parser.add_argument("--warmup", type=int, help="untimed iterations first (default 5)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke test: {' and '.join(QUICK_CASES)} unless --cases, 2 iterations x 2",
    )
    parser.add_argument("--device", default="@cupy:0", help="dbr's device (default @cupy:0)")
    parser.add_argument("--out", help="also write the report to this Markdown file")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="after the table, print the N functions with the most own time in dbr's step",
    )
    args = parser.parse_args(argv)
    small = args.quick
    args.cases = args.cases or list(QUICK_CASES if small else CASES)
    args.iterations = args.iterations or (2 if small else 20)
    args.repeats = args.repeats or (2 if small else 5)
    args.warmup = args.warmup if args.warmup is not None else (1 if small else 5)
    args.memory_iterations = 1 if small else 3
    return args


def main(argv=None):
    """Run the benchmark; returns the exit status (0, or 1 when a case failed)."""
    args = parse_args(argv)
    if args.device.startswith("@cupy"):
        reason = gpu_unavailable()
        if reason is not None:
            report = f"no GPU benchmark on {args.device}: {reason}\n"
            print(report, end="")
            if args.out:
                write_report(args.out, report)
            return 0
    device = backend.get_device(args.device)
    device.use()
    ours = DbrSide(device)
    theirs, torch_line = load_torch_side(device)
    lines = [
        "# dbr against PyTorch, ms per training iteration and peak memory",
        "",
        f"- {ours.describe()}",
        f"- {torch_line}",
        f"- ms per iteration: median of {args.repeats} repeat(s) of {args.iterations} "
        f"iteration(s), after {args.warmup} warm-up iteration(s); host ms: the part of "
        "it Python takes to issue the work (near the total: bound by the host's "
        "interpreter and launches; well below: by the device's kernels)",
        f"- peak memory: {memory_line(ours, args)}",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join(["---"] + ["--:"] * (len(COLUMNS) - 1)) + "|",
    ]
    print("\n".join(lines), flush=True)
    failed = False
    for name in args.cases:
        case = CASES[name]
        inputs = make_inputs(name, case)
        dbr_figures = measure(ours, name, case, inputs, args)
        torch_figures = (None, None, None)
        if theirs is not None:
            torch_figures = measure(theirs, name, case, inputs, args)
        failed = failed or "error" in dbr_figures + torch_figures
        lines.append(table_row(name, case, dbr_figures, torch_figures))
        print(lines[-1], flush=True)
    if args.out:
        write_report(args.out, "\n".join(lines) + "\n")
    if args.profile:
        for name in args.cases:
            case = CASES[name]
            for side in (ours, theirs):
                if side is not None:
                    print(profile(side, name, case, make_inputs(name, case), args), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
