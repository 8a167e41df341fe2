"""PrintHook: a trace of the data flowing through every function."""

import sys
import warnings

from dbr.core.function_hook import FunctionHook
from dbr.core.variable import Variable


class PrintHook(FunctionHook):
    """Function hook printing each function's inputs (and output gradients in backward).

    Before every forward it prints ``function\\t<label>``, then ``input data``
    followed by a :meth:`Variable.debug_print` description (device, shape,
    dtype, mean and standard deviation) of each input array. Before every
    backward it prints the same, then ``output gradient`` followed by a
    description of each output gradient array. An input that the function did
    not retain for backward, or an output that received no gradient, is
    printed as ``(removed)`` or ``None``.

    Args:
        sep: deprecated and ignored (kept for Chainer compatibility); passing
            anything but None warns.
        end (str): written after each printed item.
        file: a text stream to write to (``sys.stdout`` at print time when None).
        flush (bool): flush ``file`` after each function.
    """

    name = "PrintHook"

    def __init__(self, sep=None, end="\n", file=None, flush=True):
        if sep is not None:
            warnings.warn(
                "PrintHook: the sep argument is deprecated and ignored",
                DeprecationWarning,
                stacklevel=2,
            )
        self.sep = sep
        self.end = end
        self.file = file
        self.flush = flush

    def forward_preprocess(self, function, in_data):
        """Print the label of ``function`` and its input arrays."""
        self._print_call(function, in_data, None)

    def backward_preprocess(self, function, in_data, out_grad):
        """Print the label of ``function``, its retained inputs and its output gradients."""
        self._print_call(function, in_data, out_grad)

    def _print_call(self, function, in_data, out_grad):
        file = sys.stdout if self.file is None else self.file
        end = self.end
        file.write(f"function\t{function.label}{end}")
        file.write(f"input data{end}")
        for x in in_data:
            text = "(removed)" if x is None else Variable.from_array(x, False).debug_print()
            file.write(text + end)
        if out_grad is not None:
            file.write(f"output gradient{end}")
            for gy in out_grad:
                text = "None" if gy is None else Variable.from_array(gy, False).debug_print()
                file.write(text + end)
        if self.flush and hasattr(file, "flush"):
            file.flush()
