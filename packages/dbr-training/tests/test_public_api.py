"""Every name issue 7 lists is reachable where a Chainer v7 user looks for it."""

import pytest

import dbr.training as T

OPTIMIZERS = [
    "SGD", "MomentumSGD", "NesterovAG", "CorrectedMomentumSGD", "AdaGrad", "AdaDelta",
    "RMSprop", "RMSpropGraves", "Adam", "AdamW", "AMSGrad", "AdaBound", "AMSBound",
    "SMORMS3", "MSVAG",
]  # fmt: skip
HOOKS = [
    "WeightDecay", "Lasso", "GradientClipping", "GradientHardClipping", "GradientNoise",
    "GradientLARS",
]  # fmt: skip
TRIGGERS = [
    "IntervalTrigger", "ManualScheduleTrigger", "MinValueTrigger", "MaxValueTrigger",
    "BestValueTrigger", "EarlyStoppingTrigger", "OnceTrigger", "TimeTrigger",
]  # fmt: skip
EXTENSIONS = [
    "Evaluator", "LogReport", "PrintReport", "ProgressBar", "snapshot", "snapshot_object",
    "ExponentialShift", "LinearShift", "StepShift", "MultistepShift", "PolynomialShift",
    "InverseShift", "WarmupShift", "observe_lr", "observe_value", "FailOnNonNumber",
    "ParameterStatistics", "MicroAverage", "PlotReport", "VariableStatisticsPlot",
    "DumpGraph", "dump_graph", "unchain_variables", "TensorBoardReport",
]  # fmt: skip
TOP = [
    "Trainer", "StandardUpdater", "ParallelUpdater", "MultiprocessParallelUpdater",
    "Updater", "Extension", "make_extension", "get_trigger", "Optimizer", "GradientMethod",
    "UpdateRule", "Hyperparameter",
]  # fmt: skip


@pytest.mark.parametrize(
    ("module", "name"),
    [(T.optimizers, n) for n in OPTIMIZERS]
    + [(T.optimizer_hooks, n) for n in HOOKS]
    + [(T.triggers, n) for n in TRIGGERS]
    + [(T.extensions, n) for n in EXTENSIONS]
    + [(T, n) for n in TOP]
    + [(T.updaters, n) for n in ("StandardUpdater", "ParallelUpdater")],
)
def test_name_is_exported_with_a_docstring(module, name):
    obj = getattr(module, name)
    assert name in module.__all__
    assert obj.__doc__ and obj.__doc__.strip()


def test_every_optimizer_sets_up_on_a_link_and_returns_itself():
    from dbr.core import Link, Parameter

    class One(Link):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.w = Parameter(1.0, (2,))

    for name in OPTIMIZERS:
        optimizer = getattr(T.optimizers, name)()
        assert optimizer.setup(One()) is optimizer
