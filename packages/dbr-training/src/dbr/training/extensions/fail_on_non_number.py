"""FailOnNonNumber: stop training as soon as a parameter holds NaN or Inf."""

from dbr.core import backend
from dbr.training import extension


class FailOnNonNumber(extension.Extension):
    """Trainer extension raising RuntimeError when a parameter contains NaN or Inf.

    At every iteration (by default) it checks the parameters of the targets of
    all the updater's optimizers, so that a diverged run stops instead of
    computing on. Only parameter values are checked: gradients may
    legitimately overflow (a step skipped by dynamic loss scaling), and
    uninitialized parameters are skipped.

    Raises:
        RuntimeError: naming the optimizer and the parameter (its path in
            the target, e.g. ``'/l1/W'``).
    """

    def __call__(self, trainer):
        """Check every parameter of every optimizer's target."""
        for optimizer_name, optimizer in trainer.updater.get_all_optimizers().items():
            for param_name, param in optimizer.target.namedparams():
                array = param.array
                if array is None:
                    continue
                xp = backend.get_array_module(array)
                if not bool(xp.isfinite(array).all()):
                    raise RuntimeError(
                        f"FailOnNonNumber: parameter {param_name!r} of the target of optimizer "
                        f"{optimizer_name!r} contains NaN or Inf at iteration "
                        f"{trainer.updater.iteration}: the parameters diverged. R.I.P."
                    )
