import io
import os
import sys

import numpy
import pytest

from dbr.core.serializers import (
    DeserializationError,
    DictionarySerializer,
    HDF5Deserializer,
    HDF5Serializer,
    load_hdf5,
    save_hdf5,
)

try:
    import h5py
except ImportError:
    h5py = None

needs_h5py = pytest.mark.skipif(
    h5py is None, reason='h5py is not installed (pip install "dbr-core[hdf5]")'
)


class FakeLink:
    """A Link-like target following Link.serialize's protocol."""

    def __init__(self, params=(), persistents=(), children=()):
        self.params = dict(params)
        self.persistents = dict(persistents)
        self.children = dict(children)

    def serialize(self, serializer):
        for name, array in self.params.items():
            data = serializer(name, array)
            if array is None and data is not None:
                self.params[name] = numpy.array(data)
        for name, value in self.persistents.items():
            self.persistents[name] = serializer(name, value)
        for name, child in self.children.items():
            child.serialize(serializer[name])

    def state(self):
        out = {}
        for name, value in {**self.params, **self.persistents}.items():
            out[name] = value.copy() if isinstance(value, numpy.ndarray) else value
        for name, child in self.children.items():
            out.update({f"{name}/{k}": v for k, v in child.state().items()})
        return out


def make_model(seed=0):
    rng = numpy.random.default_rng(seed)

    def f32(*shape):
        return rng.standard_normal(shape).astype(numpy.float32)

    l1 = FakeLink({"W": f32(3, 2), "b": f32(3)})
    l2 = FakeLink({"W": None, "b": f32(2)})
    bn = FakeLink({"gamma": f32(3)}, {"avg_mean": f32(3), "N": 0})
    predictor = FakeLink(
        persistents={"scale": 0.5, "count": 7, "flag": True, "tag": "abc"},
        children={"l1": l1, "l2": l2, "bn": bn},
    )
    return FakeLink(children={"predictor": predictor})


def assert_same_state(a, b):
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, numpy.ndarray):
            assert isinstance(y, numpy.ndarray) and x.dtype == y.dtype, key
            numpy.testing.assert_array_equal(x, y, err_msg=key)
        else:
            assert type(x) is type(y) and x == y, key


def saved(tmp_path, model, name="model.h5", **kwargs):
    path = tmp_path / name
    save_hdf5(path, model, **kwargs)
    return path


def test_missing_h5py_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(
        RuntimeError, match=r'save_hdf5 needs h5py.*pip install "dbr-core\[hdf5\]"'
    ):
        save_hdf5(tmp_path / "m.h5", make_model())
    with pytest.raises(RuntimeError, match=r"load_hdf5 needs h5py"):
        load_hdf5(tmp_path / "m.h5", make_model())
    with pytest.raises(RuntimeError, match=r"HDF5Serializer needs h5py"):
        HDF5Serializer(None)
    assert os.listdir(tmp_path) == []


@needs_h5py
class TestLayout:
    def test_a_group_per_path_component(self, tmp_path):
        path = saved(tmp_path, make_model())
        with h5py.File(path, "r") as f:
            assert set(f) == {"predictor"}
            assert set(f["predictor"]) == {"l1", "l2", "bn", "scale", "count", "flag", "tag"}
            assert isinstance(f["predictor/l1"], h5py.Group)
            w = f["predictor/l1/W"]
            assert (w.shape, w.dtype, w.compression, w.compression_opts) == (
                (3, 2),
                numpy.float32,
                "gzip",
                4,
            )
            assert f["predictor/l2/W"].shape is None  # None is stored as h5py.Empty, as Chainer
            count = f["predictor/count"]
            assert (count.shape, count.dtype, count.compression) == ((), numpy.int64, None)
            assert f["predictor/flag"][()] is numpy.True_
            assert f["predictor/tag"].asstr()[()] == "abc"

    def test_compression_level(self, tmp_path):
        path = saved(
            tmp_path, FakeLink({"W": numpy.zeros(8), "one": numpy.zeros(1)}), compression=9
        )
        with h5py.File(path, "r") as f:
            assert f["W"].compression_opts == 9
            assert f["one"].compression is None

    def test_serializer_on_a_group(self, tmp_path):
        with h5py.File(tmp_path / "m.h5", "w") as f:
            s = HDF5Serializer(f.create_group("model"))
            value = numpy.arange(3.0)
            assert s["/l1/"]("/W", value) is value
            assert numpy.array_equal(f["model/l1/W"][()], value)

    def test_refuses_object_values(self, tmp_path):
        with (
            h5py.File(tmp_path / "m.h5", "w") as f,
            pytest.raises(TypeError, match=r"HDF5Serializer: cannot store 'x'.*got dict"),
        ):
            HDF5Serializer(f)("x", {"a": 1})

    def test_dict_is_saved_as_is(self, tmp_path):
        path = tmp_path / "d.h5"
        save_hdf5(path, {"a": numpy.arange(3), "/b/c": 1.5})
        with h5py.File(path, "r") as f:
            assert numpy.array_equal(f["a"][()], numpy.arange(3))
            assert f["b/c"][()] == 1.5

    def test_a_serialized_dict_with_none_is_saved_and_loads_back(self, tmp_path):
        # As in save_npz: a snapshot's DictionarySerializer target holds None
        # as numpy.asarray(None); HDF5 writes it as an empty dataset (Chainer's None).
        serializer = DictionarySerializer()
        serializer.save(FakeLink({"W": numpy.arange(3.0)}, {"best": None}))
        path = tmp_path / "snapshot.h5"
        save_hdf5(path, serializer.target)
        with h5py.File(path, "r") as f:
            assert f["best"].shape is None
        target = FakeLink({"W": numpy.zeros(3)}, {"best": None})
        load_hdf5(path, target)
        assert target.persistents["best"] is None
        numpy.testing.assert_array_equal(target.params["W"], numpy.arange(3.0))


@needs_h5py
class TestRoundTrip:
    def test_values_and_types_come_back(self, tmp_path):
        path = saved(tmp_path, make_model(0))
        target = make_model(1)
        w = target.children["predictor"].children["l1"].params["W"]
        load_hdf5(path, target)
        assert_same_state(target.state(), make_model(0).state())
        assert target.children["predictor"].children["l1"].params["W"] is w

    def test_uninitialized_param_is_initialized_from_the_file(self, tmp_path):
        source = make_model(0)
        source.children["predictor"].children["l2"].params["W"] = numpy.full((2, 3), 7, "f")
        target = make_model(1)
        load_hdf5(saved(tmp_path, source), target)
        w = target.children["predictor"].children["l2"].params["W"]
        assert w.shape == (2, 3) and w.dtype == numpy.float32 and (w == 7).all()

    def test_file_objects(self):
        buf = io.BytesIO()
        save_hdf5(buf, make_model(0))
        buf.seek(0)
        target = make_model(1)
        load_hdf5(buf, target)
        assert_same_state(target.state(), make_model(0).state())

    def test_chainer_layout_loads(self, tmp_path):
        """A file laid out the way Chainer 7's save_hdf5 writes one."""
        path = tmp_path / "chainer.h5"
        with h5py.File(path, "w") as f:
            f.create_dataset("predictor/l1/W", data=numpy.ones((3, 2), "f"), compression=4)
            f.create_dataset("predictor/l1/b", data=numpy.arange(3, dtype="f"), compression=4)
            f.create_dataset("predictor/l2/W", data=h5py.Empty("f"))
            f.create_dataset("predictor/count", data=numpy.asarray(3))
        target = FakeLink(
            children={
                "predictor": FakeLink(
                    {},
                    {"count": 0},
                    {
                        "l1": FakeLink({"W": numpy.zeros((3, 2), "f"), "b": None}),
                        "l2": FakeLink({"W": None}),
                    },
                )
            }
        )
        load_hdf5(path, target)
        p = target.children["predictor"]
        assert (p.children["l1"].params["W"] == 1).all()
        numpy.testing.assert_array_equal(p.children["l1"].params["b"], [0, 1, 2])
        assert p.children["l2"].params["W"] is None
        assert p.persistents["count"] == 3


@needs_h5py
class TestChecks:
    def nested(self):
        return FakeLink(children={"updater": FakeLink(children={"model:main": make_model(0)})})

    def test_path(self, tmp_path):
        path = saved(tmp_path, self.nested())
        target = make_model(1)
        load_hdf5(path, target, path="updater/model:main")
        assert_same_state(target.state(), make_model(0).state())

    def test_one_error_names_everything_and_changes_nothing(self, tmp_path):
        source = make_model(0)
        p = source.children["predictor"]
        del p.children["l1"].params["b"]
        p.children["l1"].params["W"] = numpy.zeros((2, 3), "f")
        p.persistents["extra"] = 1
        path = saved(tmp_path, source)
        target = make_model(1)
        before = target.state()
        with pytest.raises(DeserializationError) as info:
            load_hdf5(path, target)
        e = info.value
        assert e.missing == ["predictor/l1/b"]
        assert e.unexpected == ["predictor/extra"]
        assert [k for k, _ in e.mismatched] == ["predictor/l1/W"]
        assert str(e).startswith(f"load_hdf5: {str(path)!r} does not match the target")
        assert_same_state(target.state(), before)
        with pytest.raises(DeserializationError) as info:
            load_hdf5(path, target, strict=False)
        assert (info.value.missing, info.value.unexpected) == ([], [])
        assert_same_state(target.state(), before)
        load_hdf5(path, target, ignore_names=["predictor/extra", lambda k: "l1/" in k])
        expected = make_model(0).state()
        for key in ("predictor/l1/W", "predictor/l1/b"):
            expected[key] = before[key]
        assert_same_state(target.state(), expected)

    def test_unsupported_dtype_is_refused_naming_the_key(self, tmp_path):
        path = tmp_path / "c.h5"
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=numpy.zeros(2, dtype=[("a", "f4"), ("b", "i4")]))
        with pytest.raises(DeserializationError, match="'x': the dataset has dtype"):
            load_hdf5(path, FakeLink({"x": None}))

    def test_direct_use(self, tmp_path):
        path = saved(tmp_path, make_model(0))
        with h5py.File(path, "r") as f:
            d = HDF5Deserializer(f)
            w = numpy.zeros((3, 2), "f")
            assert d["predictor"]["l1"]("W", w) is w
            assert d["predictor"]("tag", "") == "abc"
            with pytest.raises(KeyError, match="HDF5Deserializer: key 'predictor/zz' is missing"):
                d["predictor"]("zz", 0)
            assert HDF5Deserializer(f, strict=False)("zz", 2) == 2
        numpy.testing.assert_array_equal(
            w, make_model(0).children["predictor"].children["l1"].params["W"]
        )


@needs_h5py
class TestAtomicSave:
    class Exploding:
        def serialize(self, serializer):
            serializer("a", numpy.zeros(3))
            raise RuntimeError("boom")

    def test_failing_serialize_leaves_no_file(self, tmp_path):
        with pytest.raises(RuntimeError, match="boom"):
            save_hdf5(tmp_path / "m.h5", self.Exploding())
        assert os.listdir(tmp_path) == []

    def test_failing_serialize_leaves_the_old_file_untouched(self, tmp_path):
        path = saved(tmp_path, make_model(0))
        old = path.read_bytes()
        with pytest.raises(RuntimeError, match="boom"):
            save_hdf5(path, self.Exploding())
        assert path.read_bytes() == old
        assert os.listdir(tmp_path) == ["model.h5"]
