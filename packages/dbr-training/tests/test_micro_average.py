import numpy as np
import pytest

from dbr.core import Variable
from dbr.training.extensions.micro_average import MicroAverage


def test_micro_average_over_epochs(tmp_path, make_trainer):
    trainer, model = make_trainer(tmp_path, stop=(2, "epoch"), batch=2)  # 4 iterations per epoch
    results = []

    def writer(t):
        i = t.updater.iteration
        if i != 3:  # an iteration without the keys is skipped
            t.observation["num"] = float(i)
            t.observation["den"] = Variable(np.array(i * i + 1.0))

    trainer.extend(writer, name="writer", priority=1000)
    trainer.extend(MicroAverage("num", "den", "ratio"))
    trainer.extend(lambda t: results.append(t.observation.get("ratio")), name="rec")
    trainer.run()
    assert results[:3] == [None, None, None] and results[4:7] == [None, None, None]
    epoch1, epoch2 = [1, 2, 4], [5, 6, 7, 8]
    assert results[3] == pytest.approx(sum(epoch1) / sum(i * i + 1 for i in epoch1))
    assert results[7] == pytest.approx(sum(epoch2) / sum(i * i + 1 for i in epoch2))
    assert results[3] != pytest.approx(np.mean([i / (i * i + 1) for i in epoch1]))


def test_missing_keys_skip_and_serialize():
    from dbr.core.serializers import DictionarySerializer

    ext = MicroAverage("n", "d", "r", trigger=(1, "iteration"))
    ext._numerator, ext._denominator = 3, 7
    saver = DictionarySerializer()
    ext.serialize(saver)
    assert int(saver.target["_numerator"]) == 3 and int(saver.target["_denominator"]) == 7
    with pytest.raises(TypeError, match="MicroAverage: expected result_key to be a str"):
        MicroAverage("n", "d", None)
