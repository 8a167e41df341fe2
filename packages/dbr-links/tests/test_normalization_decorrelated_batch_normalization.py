import numpy
import pytest

from dbr.core import InvalidType, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.serializers import (
    DeserializationError,
    NpzDeserializer,
    load_hdf5,
    load_npz,
    save_hdf5,
    save_npz,
)
from dbr.core.testing import assert_allclose, bad_input_test, tolerances
from dbr.core.testing.link_checks import check_round_trip, param_names, persistent_names
from dbr.links.normalization.decorrelated_batch_normalization import (
    DecorrelatedBatchNormalization,
)


def _groups(x, groups):
    """``x`` (N, groups * C, ...) as float64 matrices of shape (groups, C, m)."""
    n, channels = x.shape[:2]
    c = channels // groups
    x64 = x.astype(numpy.float64).reshape(n, groups, c, -1)
    return x64.transpose(1, 2, 0, 3).reshape(groups, c, -1)


def _ungroup(y, shape):
    groups, c = y.shape[:2]
    n = shape[0]
    return y.reshape(groups, c, n, -1).transpose(2, 0, 1, 3).reshape(shape)


def _whiten(x, groups, eps=2e-5):
    """NumPy reference: (output, means, projections, m) by the batch statistics."""
    xs = _groups(x, groups)
    m = xs.shape[2]
    mean = xs.mean(axis=2)
    centred = xs - mean[:, :, None]
    cov = centred @ centred.transpose(0, 2, 1) / m + eps * numpy.eye(xs.shape[1])
    w, v = numpy.linalg.eigh(cov)
    projection = v @ (v.transpose(0, 2, 1) / numpy.sqrt(w)[:, :, None])
    return _ungroup(projection @ centred, x.shape), mean, projection, m


def test_positional_and_keyword_forms():
    dbn = DecorrelatedBatchNormalization(6, 2, 0.8, 1e-3, numpy.float64)
    assert (dbn.groups, dbn.decay, dbn.eps) == (2, 0.8, 1e-3)
    assert dbn.avg_mean.shape == (2, 3) and dbn.avg_mean.dtype == numpy.float64
    numpy.testing.assert_array_equal(dbn.avg_projection, numpy.stack([numpy.eye(3)] * 2))
    dbn = DecorrelatedBatchNormalization(size=32)
    assert dbn.groups == 16 and dbn.decay == 0.9 and dbn.eps == 2e-5 and dbn.N == 0
    assert dbn.avg_projection.shape == (16, 2, 2) and dbn.avg_projection.dtype == numpy.float32


def test_names():
    dbn = DecorrelatedBatchNormalization(4, groups=2)
    assert param_names(dbn) == []
    assert persistent_names(dbn) == ["/N", "/avg_mean", "/avg_projection"]


@pytest.mark.parametrize("shape", [(10, 4), (4, 4, 3)])
def test_training_values_and_running_statistics(shape):
    decay = 0.7
    dbn = DecorrelatedBatchNormalization(4, groups=2, decay=decay, dtype=numpy.float64)
    mean = numpy.zeros((2, 2))
    projection = numpy.stack([numpy.eye(2)] * 2)
    for _ in range(2):
        x = numpy.random.randn(*shape) + 0.5
        if x.ndim == 2:
            x[:, 1] += 0.8 * x[:, 0]
        y = dbn(x)
        expected, batch_mean, batch_projection, m = _whiten(x, 2)
        assert_allclose(y.array, expected, atol=1e-8, rtol=1e-6)
        mean = decay * mean + (1 - decay) * batch_mean
        projection = decay * projection + (1 - decay) * m / (m - 1) * batch_projection
        assert_allclose(dbn.avg_mean, mean, atol=1e-10, rtol=1e-8)
        assert_allclose(dbn.avg_projection, projection, atol=1e-8, rtol=1e-6)


def test_finetune_and_test_mode():
    dbn = DecorrelatedBatchNormalization(2, groups=1, dtype=numpy.float64)
    batches = [numpy.random.randn(8, 2) * (i + 1) for i in range(3)]
    for x in batches:
        dbn(x, finetune=True)
    assert dbn.N == 3
    refs = [_whiten(x, 1) for x in batches]
    m = refs[0][3]
    assert_allclose(dbn.avg_mean, numpy.mean([r[1] for r in refs], 0), atol=1e-12, rtol=1e-10)
    assert_allclose(
        dbn.avg_projection,
        numpy.mean([r[2] for r in refs], 0) * m / (m - 1),
        atol=1e-10,
        rtol=1e-8,
    )
    dbn.start_finetuning()
    assert dbn.N == 0

    mean, projection = dbn.avg_mean.copy(), dbn.avg_projection.copy()
    x = numpy.random.randn(3, 2)
    with using_config("train", False):
        y = dbn(x, finetune=True)
    assert dbn.N == 0
    numpy.testing.assert_array_equal(dbn.avg_mean, mean)
    assert_allclose(y.array, (x - mean[0]) @ projection[0].T, atol=1e-12, rtol=1e-10)


def test_recomputing_leaves_statistics_alone():
    dbn = DecorrelatedBatchNormalization(2, groups=1)
    with using_config("in_recomputing", True):
        dbn(numpy.random.randn(5, 2).astype(numpy.float32), finetune=True)
    numpy.testing.assert_array_equal(dbn.avg_mean, numpy.zeros((1, 2), numpy.float32))
    assert dbn.N == 0


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_input_gradients(dtype):
    dbn = DecorrelatedBatchNormalization(4, groups=2, dtype=dtype)
    x = numpy.random.randn(6, 4).astype(dtype)
    gy = numpy.random.randn(6, 4).astype(dtype)
    check_backward(dbn, x, gy, dtype=numpy.float64, **tolerances(dtype, "backward"))
    with using_config("train", False):
        check_backward(dbn, x, gy, dtype=numpy.float64, **tolerances(dtype, "backward"))


def test_round_trip_and_copy():
    dbn = DecorrelatedBatchNormalization(4, groups=2)
    dbn(numpy.random.randn(6, 4).astype(numpy.float32), finetune=True)
    fresh = check_round_trip(dbn, DecorrelatedBatchNormalization(4, groups=2))
    assert fresh.N == 1
    copied = dbn.copy("copy")
    assert copied.avg_projection is not dbn.avg_projection
    numpy.testing.assert_array_equal(copied.avg_projection, dbn.avg_projection)


def _old_layout(channels, dtype=numpy.float32):
    """Statistics as older Chainer saved them: one group's, (C,) and (C, C)."""
    return {
        "avg_mean": numpy.arange(channels, dtype=dtype),
        "avg_projection": numpy.arange(channels * channels, dtype=dtype).reshape(
            channels, channels
        ),
        "N": numpy.array(3),
    }


@pytest.mark.parametrize("save,load", [(save_npz, load_npz), (save_hdf5, load_hdf5)])
def test_loads_one_groups_statistics_of_old_chainer_into_each_group(tmp_path, save, load):
    if save is save_hdf5:
        pytest.importorskip("h5py")
    stored = _old_layout(2, numpy.float64)
    path = tmp_path / "old"
    save(path, stored)
    dbn = DecorrelatedBatchNormalization(4, groups=2)
    with pytest.warns(UserWarning, match="holds one group's statistics") as record:
        load(path, dbn)
    assert sorted(str(w.message).split("'")[1] for w in record) == ["avg_mean", "avg_projection"]
    assert dbn.N == 3
    assert dbn.avg_mean.shape == (2, 2) and dbn.avg_mean.dtype == numpy.float32
    numpy.testing.assert_array_equal(dbn.avg_mean, [stored["avg_mean"]] * 2)
    numpy.testing.assert_array_equal(dbn.avg_projection, [stored["avg_projection"]] * 2)
    dbn(numpy.random.randn(5, 4).astype(numpy.float32))


def test_loads_one_group_of_old_chainer_without_warning(recwarn):
    dbn = DecorrelatedBatchNormalization(3, groups=1)
    NpzDeserializer(_old_layout(3)).load(dbn)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]
    numpy.testing.assert_array_equal(dbn.avg_projection[0], _old_layout(3)["avg_projection"])


def test_loading_statistics_of_another_shape_names_them():
    stored = _old_layout(3)
    dbn = DecorrelatedBatchNormalization(4, groups=2)
    with pytest.raises(DeserializationError, match=r"'avg_mean'.*\(2, 2\).*got \(3,\)"):
        NpzDeserializer(stored).load(dbn)


def _in_test_mode(link, *args):
    """Call ``link`` with config.train off, the path that uses the running statistics."""
    with using_config("train", False):
        return link(*args)


_DBN = DecorrelatedBatchNormalization(4, groups=2)

test_bad_input = bad_input_test(
    [
        (
            DecorrelatedBatchNormalization,
            (6,),
            {"groups": 4},
            ValueError,
            "size must be a multiple of groups, got size=6 and",
        ),
        (
            DecorrelatedBatchNormalization,
            (6,),
            {"groups": 0},
            ValueError,
            "groups must be a positive int, got 0",
        ),
        (
            (numpy.zeros((5, 6), numpy.float32),),
            InvalidType,
            ("DecorrelatedBatchNormalization", "(2, 3)"),
        ),
        (
            _in_test_mode,
            (_DBN, numpy.zeros((5, 6), numpy.float32)),
            {},
            InvalidType,
            ("FixedDecorrelatedBatchNormalization", "2 != 3"),
        ),
        (
            (numpy.zeros((5, 4), numpy.float32),),
            {"groups": 1},
            TypeError,
            "unexpected keyword arguments ['groups']",
        ),
    ],
    function=_DBN,
)
