"""Triggers: callables ``trigger(trainer) -> bool`` deciding when an extension runs
or when training stops."""

from dbr.training.triggers._trigger_util import get_trigger
from dbr.training.triggers.early_stopping_trigger import EarlyStoppingTrigger
from dbr.training.triggers.interval_trigger import IntervalTrigger
from dbr.training.triggers.manual_schedule_trigger import ManualScheduleTrigger
from dbr.training.triggers.minmax_value_trigger import (
    BestValueTrigger,
    MaxValueTrigger,
    MinValueTrigger,
)
from dbr.training.triggers.once_trigger import OnceTrigger
from dbr.training.triggers.time_trigger import TimeTrigger

__all__ = [
    "BestValueTrigger",
    "EarlyStoppingTrigger",
    "IntervalTrigger",
    "ManualScheduleTrigger",
    "MaxValueTrigger",
    "MinValueTrigger",
    "OnceTrigger",
    "TimeTrigger",
    "get_trigger",
]
