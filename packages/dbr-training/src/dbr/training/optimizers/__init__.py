"""Chainer v7's optimizers and their update rules."""

from dbr.core.utils import missing_attribute as _missing_attribute
from dbr.training.optimizers.ada_delta import AdaDelta, AdaDeltaRule
from dbr.training.optimizers.ada_grad import AdaGrad, AdaGradRule
from dbr.training.optimizers.adam import AdaBound, Adam, AdamRule, AdamW, AMSBound, AMSGrad
from dbr.training.optimizers.corrected_momentum_sgd import (
    CorrectedMomentumSGD,
    CorrectedMomentumSGDRule,
)
from dbr.training.optimizers.momentum_sgd import MomentumSGD, MomentumSGDRule
from dbr.training.optimizers.msvag import MSVAG, MSVAGRule
from dbr.training.optimizers.nesterov_ag import NesterovAG, NesterovAGRule
from dbr.training.optimizers.rmsprop import RMSprop, RMSpropRule
from dbr.training.optimizers.rmsprop_graves import RMSpropGraves, RMSpropGravesRule
from dbr.training.optimizers.sgd import SGD, SGDRule
from dbr.training.optimizers.smorms3 import SMORMS3, SMORMS3Rule

__all__ = [
    "AMSBound",
    "AMSGrad",
    "MSVAG",
    "MSVAGRule",
    "SGD",
    "SGDRule",
    "SMORMS3",
    "SMORMS3Rule",
    "AdaBound",
    "AdaDelta",
    "AdaDeltaRule",
    "AdaGrad",
    "AdaGradRule",
    "Adam",
    "AdamRule",
    "AdamW",
    "CorrectedMomentumSGD",
    "CorrectedMomentumSGDRule",
    "MomentumSGD",
    "MomentumSGDRule",
    "NesterovAG",
    "NesterovAGRule",
    "RMSprop",
    "RMSpropGraves",
    "RMSpropGravesRule",
    "RMSpropRule",
]


def __getattr__(name):
    raise _missing_attribute(__name__, name, __all__)
