"""Trainer extensions: evaluation, logging, reports, snapshots, schedules and plots.

Chainer v7's ``chainer.training.extensions``, plus :class:`TensorBoardReport`.
"""

from dbr.core.utils import missing_attribute as _missing_attribute
from dbr.training.extensions._snapshot import snapshot, snapshot_object
from dbr.training.extensions.computational_graph import DumpGraph, dump_graph
from dbr.training.extensions.evaluator import Evaluator
from dbr.training.extensions.exponential_shift import ExponentialShift
from dbr.training.extensions.fail_on_non_number import FailOnNonNumber
from dbr.training.extensions.inverse_shift import InverseShift
from dbr.training.extensions.linear_shift import LinearShift
from dbr.training.extensions.log_report import LogReport
from dbr.training.extensions.micro_average import MicroAverage
from dbr.training.extensions.multistep_shift import MultistepShift
from dbr.training.extensions.parameter_statistics import ParameterStatistics
from dbr.training.extensions.plot_report import PlotReport
from dbr.training.extensions.polynomial_shift import PolynomialShift
from dbr.training.extensions.print_report import PrintReport
from dbr.training.extensions.progress_bar import ProgressBar
from dbr.training.extensions.step_shift import StepShift
from dbr.training.extensions.tensorboard_report import TensorBoardReport
from dbr.training.extensions.unchain_variables import unchain_variables
from dbr.training.extensions.value_observation import observe_lr, observe_value
from dbr.training.extensions.variable_statistics_plot import VariableStatisticsPlot
from dbr.training.extensions.warmup_shift import WarmupShift

__all__ = [
    "DumpGraph",
    "Evaluator",
    "ExponentialShift",
    "FailOnNonNumber",
    "InverseShift",
    "LinearShift",
    "LogReport",
    "MicroAverage",
    "MultistepShift",
    "ParameterStatistics",
    "PlotReport",
    "PolynomialShift",
    "PrintReport",
    "ProgressBar",
    "StepShift",
    "TensorBoardReport",
    "VariableStatisticsPlot",
    "WarmupShift",
    "dump_graph",
    "observe_lr",
    "observe_value",
    "snapshot",
    "snapshot_object",
    "unchain_variables",
]


def __getattr__(name):
    raise _missing_attribute(__name__, name, __all__)
