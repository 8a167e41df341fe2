"""FusedRule, the base of the built-in update rules: state, guards, and the GPU kernel's arguments.

No GPU is needed: the kernel is replaced by a recorder, so that the order of
the arguments every built-in rule hands its kernel is checked on any machine.
"""

import numpy
import pytest

from dbr.core import Parameter
from dbr.training import optimizer, optimizers
from dbr.training.optimizers._rule import FusedRule, decay_mean_square


class _Rule(FusedRule):
    _defaults = optimizer.Hyperparameter()
    _defaults.lr = 0.5
    _defaults.decay = 0.25
    _initial_state = {"ones": 1, "zeros": 0}
    _kernel_hyperparams = ("lr", "decay")
    _elementwise = {"name": "test_rule"}

    def __init__(self, parent_hyperparam=None, lr=None):
        super().__init__(parent_hyperparam, lr=lr)
        self.advanced = 0

    def _update_cpu(self, xp, grad, data, ones, zeros):
        zeros += grad
        data -= self.hyperparam.lr * ones * grad

    def _advance(self):
        self.advanced += 1


@pytest.fixture
def kernel_calls(monkeypatch):
    calls = []

    def fake_gpu_elementwise(definition):
        return lambda *args: calls.append((definition["name"], args))

    monkeypatch.setattr(optimizer, "gpu_elementwise", fake_gpu_elementwise)
    return calls


def test_state_is_created_with_the_initial_values_in_order():
    rule = _Rule()
    param = Parameter(numpy.full((2, 3), 2.0, numpy.float32))
    param.grad = numpy.ones((2, 3), numpy.float32)
    rule.update(param)
    assert list(rule.state) == ["ones", "zeros"]
    numpy.testing.assert_array_equal(rule.state["ones"], numpy.ones((2, 3), numpy.float32))
    numpy.testing.assert_array_equal(rule.state["zeros"], numpy.ones((2, 3), numpy.float32))
    numpy.testing.assert_array_equal(param.array, numpy.full((2, 3), 1.5, numpy.float32))
    assert rule.advanced == 1
    assert rule._state_keys() == ["ones", "zeros"]


def test_hyperparameters_given_override_the_defaults_only_on_the_rule():
    rule = _Rule(lr=0.1)
    assert (rule.hyperparam.lr, rule.hyperparam.decay) == (0.1, 0.25)
    assert _Rule._defaults.lr == 0.5


def test_a_parameter_without_gradient_is_left_alone_on_both_paths(kernel_calls):
    rule = _Rule()
    param = Parameter(numpy.ones(3, numpy.float32))
    rule.update(param)
    rule.update_core_gpu(param)
    numpy.testing.assert_array_equal(param.array, numpy.ones(3, numpy.float32))
    assert kernel_calls == []
    assert rule.advanced == 0


def test_the_kernel_takes_grad_scalars_param_then_the_state(kernel_calls):
    rule = _Rule()
    param = Parameter(numpy.zeros(3, numpy.float32))
    param.grad = numpy.ones(3, numpy.float32)
    rule.update(param)
    rule.update_core_gpu(param)
    ((name, args),) = kernel_calls
    assert name == "test_rule"
    assert args[0] is param.grad
    assert args[1:3] == (0.5, 0.25)
    assert args[3] is param.array
    assert args[4] is rule.state["ones"] and args[5] is rule.state["zeros"]
    assert rule.advanced == 2


@pytest.mark.parametrize(
    ("make_rule", "n_state"),
    [
        (optimizers.SGDRule, 0),
        (optimizers.MomentumSGDRule, 1),
        (optimizers.CorrectedMomentumSGDRule, 1),
        (optimizers.NesterovAGRule, 1),
        (optimizers.AdaGradRule, 1),
        (optimizers.AdaDeltaRule, 2),
        (optimizers.RMSpropRule, 1),
        (optimizers.RMSpropGravesRule, 3),
        (optimizers.SMORMS3Rule, 3),
        (optimizers.MSVAGRule, 2),
        (optimizers.AdamRule, 2),
        (lambda: optimizers.AdamRule(amsgrad=True, adabound=True), 3),
    ],
)
def test_every_builtin_kernel_gets_as_many_arguments_as_its_definition_names(
    kernel_calls, make_rule, n_state
):
    rule = make_rule()
    param = Parameter(numpy.zeros(4))
    param.grad = numpy.ones(4)
    rule.update(param)
    rule.update_core_gpu(param)
    ((_, args),) = kernel_calls
    definition = rule._elementwise
    n_in = len(definition["in_params"].split(","))
    n_out = len(definition["out_params"].split(","))
    assert len(args) == n_in + n_out
    assert args[n_in] is param.array
    assert len(rule.state) == n_state
    assert all(a is rule.state[k] for a, k in zip(args[n_in + 1 :], rule.state, strict=True))


def test_decay_mean_square_updates_in_place_and_returns_a_scratch_array():
    grad = numpy.array([1.0, -2.0, 3.0])
    mean_square = numpy.array([4.0, 0.0, 1.0])
    expected = 0.75 * mean_square + 0.25 * grad**2
    scratch = decay_mean_square(grad, mean_square, 0.75)
    numpy.testing.assert_allclose(mean_square, expected)
    assert scratch.shape == grad.shape
    assert not numpy.shares_memory(scratch, grad) and not numpy.shares_memory(scratch, mean_square)
