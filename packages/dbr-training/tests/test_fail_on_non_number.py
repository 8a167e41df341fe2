import numpy as np
import pytest

from dbr.training.extensions.fail_on_non_number import FailOnNonNumber


def test_finite_run_passes(tmp_path, make_trainer):
    trainer, model = make_trainer(tmp_path, stop=(4, "iteration"))
    trainer.extend(FailOnNonNumber())
    trainer.run()
    assert trainer.updater.iteration == 4


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_raises_naming_the_parameter(tmp_path, bad, make_trainer):
    trainer, model = make_trainer(tmp_path, stop=(4, "iteration"))

    def poison(t):
        if t.updater.iteration == 2:
            model.b.array[...] = bad

    trainer.extend(poison, name="poison", priority=1000)
    trainer.extend(FailOnNonNumber())
    with pytest.raises(
        RuntimeError,
        match=r"parameter '/b' of the target of optimizer 'main' contains NaN or Inf "
        r"at iteration 2",
    ):
        trainer.run(show_loop_exception_msg=False)
    assert trainer.updater.iteration == 2
