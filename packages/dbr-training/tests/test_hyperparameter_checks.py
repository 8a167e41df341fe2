"""Every optimizer's hyperparameters are checked where they are set: Hyperparameter."""

import numpy
import pytest

from dbr.core import Link, Parameter
from dbr.training import optimizers

OPTIMIZERS = {
    "SGD": ("lr", optimizers.SGD),
    "MomentumSGD": ("momentum", optimizers.MomentumSGD),
    "Adam": ("alpha", optimizers.Adam),
    "AdaGrad": ("eps", optimizers.AdaGrad),
    "RMSprop": ("alpha", optimizers.RMSprop),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_string_hyperparameter_is_refused_naming_the_optimizer(name):
    hyperparameter, cls = OPTIMIZERS[name]
    message = f"{name}: expected {hyperparameter} to be a real number, got str '0.1'"
    with pytest.raises(TypeError) as info:
        cls(**{hyperparameter: "0.1"})
    assert str(info.value) == message
    optimizer = cls()
    with pytest.raises(TypeError) as info:
        setattr(optimizer.hyperparam, hyperparameter, "0.1")
    assert str(info.value) == message


def test_the_check_covers_the_proxy_and_update_rules():
    optimizer = optimizers.SGD()
    with pytest.raises(TypeError, match=r"^SGD: expected lr to be a real number, got NoneType"):
        optimizer.lr = None
    link = Link()
    with link.init_scope():
        link.w = Parameter(numpy.zeros(2, numpy.float32))
    optimizer.setup(link)
    rule = link.w.update_rule
    with pytest.raises(TypeError, match=r"^SGDRule: expected lr to be a real number, got list"):
        rule.hyperparam.lr = [0.1]
    assert optimizer.lr == 0.01 and rule.hyperparam.lr == 0.01


@pytest.mark.parametrize(
    "value",
    [0.1, 1, True, numpy.float32(0.1), numpy.int64(2), numpy.float64(0.5), numpy.array(0.1)],
)
def test_real_numbers_are_accepted(value):
    optimizer = optimizers.SGD(lr=value)
    assert optimizer.lr is value
    optimizer.hyperparam.lr = value
    assert optimizer.lr is value
