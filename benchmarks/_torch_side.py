"""The PyTorch side of gpu.py: its networks with the initial weights of dbr's, and
their training iterations, on a CUDA device or the CPU.

Imported only once torch is known to be importable.
"""

import gc

import numpy
import torch
from end_to_end import torch_twin

nn = torch.nn
MIB = 2**20


class ConvBN(nn.Module):
    """gpu.ConvBN: a convolution without bias and batch normalization (eps 2e-5,
    moving averages with decay 0.9 as dbr's defaults)."""

    def __init__(self, in_channels, out_channels, stride=1, ksize=3):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, ksize, stride=stride, padding=ksize // 2, bias=False
        )
        self.bn = nn.BatchNorm2d(out_channels, eps=2e-5, momentum=0.1)

    def forward(self, x):
        """The normalized feature maps, before any activation."""
        return self.bn(self.conv(x))

    def copy_from(self, source):
        """Take the weights and moving averages of dbr's ``source`` ConvBN."""
        _copy(self.conv.weight, source.conv.W.array)
        _copy(self.bn.weight, source.bn.gamma.array)
        _copy(self.bn.bias, source.bn.beta.array)
        _copy(self.bn.running_mean, source.bn.avg_mean)
        _copy(self.bn.running_var, source.bn.avg_var)


class BasicBlock(nn.Module):
    """gpu.BasicBlock: two 3x3 ConvBN and an identity or 1x1 ConvBN shortcut."""

    def __init__(self, source):
        super().__init__()
        self.conv1 = _conv_bn_like(source.conv1)
        self.conv2 = _conv_bn_like(source.conv2)
        self.shortcut = None if source.shortcut is None else _conv_bn_like(source.shortcut)

    def forward(self, x):
        """ReLU of the residual branch plus the shortcut."""
        h = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(h + (x if self.shortcut is None else self.shortcut(x)))


class ResNet18(nn.Module):
    """gpu.ResNet18, built from and initialised with a dbr ResNet18 ``source``."""

    def __init__(self, source):
        super().__init__()
        self.stem = _conv_bn_like(source.stem)
        self.blocks = nn.Sequential(*[BasicBlock(block) for block in source.blocks])
        self.fc = nn.Linear(source.fc.W.shape[1], source.fc.W.shape[0])
        _copy(self.fc.weight, source.fc.W.array)
        _copy(self.fc.bias, source.fc.b.array)

    def forward(self, x):
        """Class scores (batch, n_classes) for images (batch, 3, 32, 32)."""
        h = self.blocks(torch.relu(self.stem(x)))
        return self.fc(h.mean(dim=(2, 3)))


# Chainer interleaves the LSTM gates (unit j of a, i, f, o at rows 4j..4j+3); PyTorch
# stacks them in blocks ordered i, f, g (Chainer's a), o.
_TORCH_GATE_ORDER = [1, 2, 0, 3]


def _torch_gates(array):
    """dbr's interleaved (4H, ...) gate rows reordered into PyTorch's (4H, ...) blocks."""
    rows = array.reshape(-1, 4, *array.shape[1:])[:, _TORCH_GATE_ORDER]
    return numpy.ascontiguousarray(rows.swapaxes(0, 1)).reshape(array.shape)


class RNNLM(nn.Module):
    """gpu.RNNLM with ``nn.LSTMCell`` stepped once per word, initialised from dbr's."""

    def __init__(self, source):
        super().__init__()
        self.dropout = source.dropout
        n_vocab, n_units = source.embed.W.shape
        self.embed = nn.Embedding(n_vocab, n_units)
        _copy(self.embed.weight, source.embed.W.array)
        self.rnn = nn.ModuleList()
        for lstm in source.rnn:
            cell = nn.LSTMCell(n_units, n_units)
            _copy(cell.weight_ih, _torch_gates(lstm.upward.W.array))
            _copy(cell.bias_ih, _torch_gates(lstm.upward.b.array))
            _copy(cell.weight_hh, _torch_gates(lstm.lateral.W.array))
            _copy(cell.bias_hh, numpy.zeros(4 * n_units, numpy.float32))
            self.rnn.append(cell)
        self.out = nn.Linear(n_units, n_vocab)
        _copy(self.out.weight, source.out.W.array)
        _copy(self.out.bias, source.out.b.array)

    def forward(self, x, state):
        """Next-word scores for word ids ``x`` (batch,) and the new ``state`` (a list of
        (h, c) per layer; None starts from zeros)."""
        h = self.embed(x)
        new_state = []
        for i, cell in enumerate(self.rnn):
            h, c = cell(
                nn.functional.dropout(h, self.dropout), None if state is None else state[i]
            )
            new_state.append((h, c))
        return self.out(nn.functional.dropout(h, self.dropout)), new_state


def _copy(target, array):
    with torch.no_grad():
        target.copy_(torch.from_numpy(numpy.asarray(array)))


def _conv_bn_like(source):
    conv = source.conv
    out_channels, in_channels, ksize, _ = conv.W.shape
    twin = ConvBN(in_channels, out_channels, conv.stride[0], ksize)
    twin.copy_from(source)
    return twin


def twin(name, model):
    """The PyTorch network of case ``name`` with the weights of the CPU dbr ``model``."""
    if name.startswith("mlp"):
        return torch_twin(torch, "mlp", model)
    if name == "lenet5":
        return torch_twin(torch, "lenet5", model)
    return {"resnet18": ResNet18, "lstm": RNNLM}[name](model)


def torch_step(name, net, x, t):
    """One training iteration of ``net`` on tensors ``x`` and int64 labels ``t``, as
    gpu.dbr_step does it: ``step()``."""
    loss_fn = nn.CrossEntropyLoss()
    if name == "lstm":
        optimizer = torch.optim.SGD(net.parameters(), lr=1.0)
        params = list(net.parameters())
        state = None

        def bptt_step():
            nonlocal state
            loss = 0
            for i in range(len(x)):
                scores, state = net(x[i], state)
                loss = loss + loss_fn(scores, t[i])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(params, 5.0)
            optimizer.step()
            state = [(h.detach(), c.detach()) for h, c in state]

        return bptt_step
    if name == "resnet18":
        optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    else:
        optimizer = torch.optim.Adam(net.parameters())

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(net(x), t).backward()
        optimizer.step()

    return step


class TorchSide:
    """PyTorch on ``device`` ('cuda:N' or 'cpu'), in strict float32 (TF32 off)."""

    label = "torch"

    def __init__(self, device):
        self.device = torch.device(device)
        self.on_gpu = self.device.type == "cuda"
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.synchronize = self._synchronize_gpu if self.on_gpu else _nothing

    def describe(self):
        """A line naming PyTorch's device."""
        if not self.on_gpu:
            return f"torch {torch.__version__} on the CPU, {torch.get_num_threads()} thread(s)"
        gpu = torch.cuda.get_device_name(self.device)
        return f"torch {torch.__version__} on {self.device} ({gpu}, CUDA {torch.version.cuda})"

    def prepare(self, name, model, inputs):
        """The training iteration ``step()`` of case ``name``, from the CPU dbr ``model``."""
        net = twin(name, model).to(self.device)
        x, t = (torch.from_numpy(a).to(self.device) for a in inputs)
        if name == "lstm":
            x = x.long()
        return torch_step(name, net, x, t.long())

    def peak_mib(self, step, iterations):
        """``max_memory_allocated`` in MiB over ``iterations`` steps (None on the CPU)."""
        if not self.on_gpu:
            return None
        torch.cuda.reset_peak_memory_stats(self.device)
        for _ in range(iterations):
            step()
        torch.cuda.synchronize(self.device)
        return torch.cuda.max_memory_allocated(self.device) / MIB

    def release(self):
        """Give the memory of the finished case back to the device."""
        gc.collect()
        if self.on_gpu:
            torch.cuda.synchronize(self.device)
            torch.cuda.empty_cache()

    def _synchronize_gpu(self):
        torch.cuda.synchronize(self.device)


def _nothing():
    return None
