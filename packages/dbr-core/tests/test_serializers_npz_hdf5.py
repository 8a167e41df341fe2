"""save_npz/load_npz and save_hdf5/load_hdf5: the tests both formats share, then each one's own."""

import base64
import io
import os
import pickle
import sys
import zipfile

import numpy
import numpy.lib.format as npy_format
import pytest

from dbr.core import serializers
from dbr.core.serializers import (
    DeserializationError,
    Deserializer,
    DictionarySerializer,
    HDF5Deserializer,
    HDF5Serializer,
    NpzDeserializer,
    Serializer,
    load_hdf5,
    load_npz,
    save_hdf5,
    save_npz,
)

try:
    import h5py
except ImportError:
    h5py = None

needs_h5py = pytest.mark.skipif(
    h5py is None, reason='h5py is not installed (pip install "dbr-core[hdf5]")'
)

# format: (save, load, file name)
FORMATS = {
    "npz": (save_npz, load_npz, "model.npz"),
    "hdf5": (save_hdf5, load_hdf5, "model.h5"),
}


@pytest.fixture(params=["npz", pytest.param("hdf5", marks=needs_h5py)])
def fmt(request):
    """The file format of a test that both save_npz and save_hdf5 must pass."""
    return request.param


def save(fmt, *args, **kwargs):
    return FORMATS[fmt][0](*args, **kwargs)


def load(fmt, *args, **kwargs):
    return FORMATS[fmt][1](*args, **kwargs)


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
        """Every value, copied, keyed like the file."""
        out = {}
        for name, value in {**self.params, **self.persistents}.items():
            out[name] = value.copy() if isinstance(value, numpy.ndarray) else value
        for name, child in self.children.items():
            out.update({f"{name}/{k}": v for k, v in child.state().items()})
        return out


def make_model(seed=0):
    """The structure of Chainer's Classifier(Net()) that the fixture below was saved from."""
    rng = numpy.random.default_rng(seed)

    def f32(*shape):
        return rng.standard_normal(shape).astype(numpy.float32)

    l1 = FakeLink({"W": f32(3, 2), "b": f32(3)})
    l2 = FakeLink({"W": None, "b": f32(2)})
    bn = FakeLink(
        {"gamma": f32(3), "beta": f32(3)}, {"avg_mean": f32(3), "avg_var": f32(3), "N": 0}
    )
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
            assert isinstance(y, numpy.ndarray), key
            assert x.dtype == y.dtype, key
            numpy.testing.assert_array_equal(x, y, err_msg=key)
        else:
            assert type(x) is type(y) and x == y, key


def loads_keeping_target_param(tmp_path, source, name, **load_options):
    """Save ``source`` (model 0, altered), load it into model 1 with ``load_options``.

    The target must end as model 0 except ``predictor/l1/<name>``, which keeps
    model 1's value.
    """
    file = saved(tmp_path, source)
    target = make_model(1)
    kept = target.children["predictor"].children["l1"].params[name].copy()
    load_npz(file, target, **load_options)
    expected = make_model(0).state()
    expected[f"predictor/l1/{name}"] = kept
    assert_same_state(target.state(), expected)


def npz_bytes(members):
    """An NPZ archive of raw members {name: (header dict, payload bytes)}."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, (header, payload) in members.items():
            with archive.open(name + ".npy", "w") as member:
                npy_format.write_array_header_1_0(member, header)
                member.write(payload)
    buf.seek(0)
    return buf


OBJECT_0D = {"descr": "|O", "fortran_order": False, "shape": ()}

# Saved by Chainer 7.8.1 (NumPy 1.26) from L.Classifier(Net()), where Net has
# l1 = L.Linear(2, 3), l2 = L.Linear(None, 2) (W uninitialized),
# bn = L.BatchNormalization(3) and persistents scale, count, flag, tag.
CHAINER_NPZ = (
    "UEsDBC0AAAAIAAAAIQCD2NS2//////////8TABQAcHJlZGljdG9yL3NjYWxlLm5weQEAEACIAAAAAAAAAEcAAAAA"
    "AAAAm+wX6hsQychQxlCtnpJanFykbqWgbpNmoa6joJ6WX1RSlJgXn1+UkgoSd0vMKU4FihdnJBakAvkamjoKtQoU"
    "AS4GMLhgDwBQSwMELQAAAAgAAAAhABQd/6T//////////xIAFABwcmVkaWN0b3IvZmxhZy5ucHkBABAAgQAAAAAA"
    "AABDAAAAAAAAAJvsF+obEMnIUMZQrZ6SWpxcpG6loF6TZKiuo6Cell9UUpSYF59flJIKEndLzClOBYoXZyQWpAL5"
    "Gpo6CrUKFAEuBgBQSwMELQAAAAgAAAAhABGqenn//////////xMAFABwcmVkaWN0b3IvY291bnQubnB5AQAQAIgA"
    "AAAAAAAARgAAAAAAAACb7BfqGxDJyFDGUK2eklqcXKRupaBuk2mhrqOgnpZfVFKUmBefX5SSChJ3S8wpTgWKF2ck"
    "FqQC+RqaOgq1ChQBLk4GCAAAUEsDBC0AAAAIAAAAIQCBXiHC//////////8RABQAcHJlZGljdG9yL3RhZy5ucHkB"
    "ABAAjAAAAAAAAABLAAAAAAAAAJvsF+obEMnIUMZQrZ6SWpxcpG6loG4Taqyuo6Cell9UUpSYF59flJIKEndLzClO"
    "BYoXZyQWpAL5Gpo6CrUKFAGuRAYGhiQgTgZiAFBLAwQtAAAACAAAACEAKPn1u///////////EgAUAHByZWRpY3Rv"
    "ci9sMi9iLm5weQEAEACIAAAAAAAAAEwAAAAAAAAAm+wX6hsQychQxlCtnpJanFykbqWgbpNmoq6joJ6WX1RSlJgX"
    "n1+UkgoSd0vMKU4FihdnJBakAvkaRjqaOgq1ChQALgaGhv0MDAwHAFBLAwQtAAAACAAAACEA/qv5Cv//////////"
    "EgAUAHByZWRpY3Rvci9sMi9XLm5weQEAEAAWAQAAAAAAAMQAAAAAAAAAm+wX6hsQychQxlCtnpJanFykbqWgXuOv"
    "rqOgnpZfVFKUmBefX5SSChJ2S8wpTgWKF2ckFqQC+RqaOgq1CpQBrgbm5LzS3IJKveT8olS93NKckszEoqLESq74"
    "otTk/LzikqLS5BKuQgaIKq68FIhsIaM3Q2shkzNjUiFzeyFLUCGrhjejJlRRSkllQSpXIVsEEwMDg79FIXtnR3sh"
    "R1Ahp4Y3cwQjUKymkMvPz8/rPxCACW/7kkLupM7YQh6/xJJC3iQ9AFBLAwQtAAAACAAAACEAd6ZA0f//////////"
    "EgAUAHByZWRpY3Rvci9sMS9iLm5weQEAEACMAAAAAAAAAE8AAAAAAAAAm+wX6hsQychQxlCtnpJanFykbqWgbpNm"
    "oq6joJ6WX1RSlJgXn1+UkgoSd0vMKU4FihdnJBakAvkaxjqaOgq1ChQALgaGBnsGBgYHIHIAAFBLAwQtAAAACAAA"
    "ACEA+AZOhP//////////EgAUAHByZWRpY3Rvci9sMS9XLm5weQEAEACYAAAAAAAAAFsAAAAAAAAAm+wX6hsQychQ"
    "xlCtnpJanFykbqWgbpNmoq6joJ6WX1RSlJgXn1+UkgoSd0vMKU4FihdnJBakAvkaxjoKRpo6CrUKZAMuBiA4e+aM"
    "7dkzPnazZs60A7LtgEL2AFBLAwQtAAAACAAAACEAwPsEfP//////////FQAUAHByZWRpY3Rvci9ibi9iZXRhLm5w"
    "eQEAEACMAAAAAAAAAEoAAAAAAAAAm+wX6hsQychQxlCtnpJanFykbqWgbpNmoq6joJ6WX1RSlJgXn1+UkgoSd0vM"
    "KU4FihdnJBakAvkaxjqaOgq1ChQALgYGBnsYBgBQSwMELQAAAAgAAAAhAHfsJuj//////////xYAFABwcmVkaWN0"
    "b3IvYm4vZ2FtbWEubnB5AQAQAIwAAAAAAAAASgAAAAAAAACb7BfqGxDJyFDGUK2eklqcXKRupaBuk2airqOgnpZf"
    "VFKUmBefX5SSChJ3S8wpTgWKF2ckFqQC+RrGOpo6CrUKFAAuBgYGBxgGAFBLAwQtAAAACAAAACEA1iPF3P//////"
    "////GAAUAHByZWRpY3Rvci9ibi9hdmdfdmFyLm5weQEAEACMAAAAAAAAAE8AAAAAAAAAm+wX6hsQychQxlCtnpJa"
    "nFykbqWgbpNmoq6joJ6WX1RSlJgXn1+UkgoSd0vMKU4FihdnJBakAvkaxjqaOgq1ChQALgaGBgcGhgVAfMABAFBL"
    "AwQtAAAACAAAACEAXr/VLv//////////EgAUAHByZWRpY3Rvci9ibi9OLm5weQEAEACIAAAAAAAAAEYAAAAAAAAA"
    "m+wX6hsQychQxlCtnpJanFykbqWgbpNpoa6joJ6WX1RSlJgXn1+UkgoSd0vMKU4FihdnJBakAvkamjoKtQoUAS5W"
    "BggAAFBLAwQtAAAACAAAACEAd6ZA0f//////////GQAUAHByZWRpY3Rvci9ibi9hdmdfbWVhbi5ucHkBABAAjAAA"
    "AAAAAABPAAAAAAAAAJvsF+obEMnIUMZQrZ6SWpxcpG6loG6TZqKuo6Cell9UUpSYF59flJIKEndLzClOBYoXZyQW"
    "pAL5GsY6mjoKtQoUAC4GhgZ7BgYGByByAABQSwECLQMtAAAACAAAACEAg9jUtkcAAACIAAAAEwAAAAAAAAAAAAAA"
    "gAEAAAAAcHJlZGljdG9yL3NjYWxlLm5weVBLAQItAy0AAAAIAAAAIQAUHf+kQwAAAIEAAAASAAAAAAAAAAAAAACA"
    "AYwAAABwcmVkaWN0b3IvZmxhZy5ucHlQSwECLQMtAAAACAAAACEAEap6eUYAAACIAAAAEwAAAAAAAAAAAAAAgAET"
    "AQAAcHJlZGljdG9yL2NvdW50Lm5weVBLAQItAy0AAAAIAAAAIQCBXiHCSwAAAIwAAAARAAAAAAAAAAAAAACAAZ4B"
    "AABwcmVkaWN0b3IvdGFnLm5weVBLAQItAy0AAAAIAAAAIQAo+fW7TAAAAIgAAAASAAAAAAAAAAAAAACAASwCAABw"
    "cmVkaWN0b3IvbDIvYi5ucHlQSwECLQMtAAAACAAAACEA/qv5CsQAAAAWAQAAEgAAAAAAAAAAAAAAgAG8AgAAcHJl"
    "ZGljdG9yL2wyL1cubnB5UEsBAi0DLQAAAAgAAAAhAHemQNFPAAAAjAAAABIAAAAAAAAAAAAAAIABxAMAAHByZWRp"
    "Y3Rvci9sMS9iLm5weVBLAQItAy0AAAAIAAAAIQD4Bk6EWwAAAJgAAAASAAAAAAAAAAAAAACAAVcEAABwcmVkaWN0"
    "b3IvbDEvVy5ucHlQSwECLQMtAAAACAAAACEAwPsEfEoAAACMAAAAFQAAAAAAAAAAAAAAgAH2BAAAcHJlZGljdG9y"
    "L2JuL2JldGEubnB5UEsBAi0DLQAAAAgAAAAhAHfsJuhKAAAAjAAAABYAAAAAAAAAAAAAAIABhwUAAHByZWRpY3Rv"
    "ci9ibi9nYW1tYS5ucHlQSwECLQMtAAAACAAAACEA1iPF3E8AAACMAAAAGAAAAAAAAAAAAAAAgAEZBgAAcHJlZGlj"
    "dG9yL2JuL2F2Z192YXIubnB5UEsBAi0DLQAAAAgAAAAhAF6/1S5GAAAAiAAAABIAAAAAAAAAAAAAAIABsgYAAHBy"
    "ZWRpY3Rvci9ibi9OLm5weVBLAQItAy0AAAAIAAAAIQB3pkDRTwAAAIwAAAAZAAAAAAAAAAAAAACAATwHAABwcmVk"
    "aWN0b3IvYm4vYXZnX21lYW4ubnB5UEsFBgAAAAANAA0AVQMAANYHAAAAAA=="
)

CHAINER_KEYS = {
    "predictor/l1/W",
    "predictor/l1/b",
    "predictor/l2/W",
    "predictor/l2/b",
    "predictor/bn/gamma",
    "predictor/bn/beta",
    "predictor/bn/avg_mean",
    "predictor/bn/avg_var",
    "predictor/bn/N",
    "predictor/scale",
    "predictor/count",
    "predictor/flag",
    "predictor/tag",
}


def saved(tmp_path, model, name=None, fmt="npz", **kwargs):
    path = tmp_path / (name or FORMATS[fmt][2])
    save(fmt, path, model, **kwargs)
    return path


class TestDictionarySerializer:
    def test_keys_are_slash_joined_paths(self):
        s = DictionarySerializer()
        s.save(make_model())
        assert set(s.target) == CHAINER_KEYS

    def test_child_and_key_slashes_are_normalized(self):
        s = DictionarySerializer()
        s["/l1/"]("/W", numpy.zeros(2))
        s["l1"]["sub"]("b", 1.0)
        assert set(s.target) == {"l1/W", "l1/sub/b"}

    def test_values_are_copies_and_scalars_0d_arrays(self):
        model = make_model()
        s = DictionarySerializer()
        s.save(model)
        w = model.children["predictor"].children["l1"].params["W"]
        w[...] = 42
        assert not (s.target["predictor/l1/W"] == 42).any()
        t = s.target
        assert (t["predictor/count"].dtype, t["predictor/count"].shape) == (numpy.int64, ())
        assert t["predictor/scale"].dtype == numpy.float64 and t["predictor/scale"][()] == 0.5
        assert t["predictor/flag"].dtype == numpy.bool_
        assert t["predictor/tag"][()] == "abc"
        none = t["predictor/l2/W"]
        assert none.dtype == object and none.shape == () and none[()] is None

    def test_returns_the_value(self):
        value = numpy.ones(3)
        assert DictionarySerializer()("x", value) is value

    def test_refuses_values_that_need_pickling(self):
        with pytest.raises(TypeError, match=r"DictionarySerializer: cannot store 'a/x'.*pickling"):
            DictionarySerializer()["a"]("x", {"not": "an array"})

    def test_is_a_serializer(self):
        assert isinstance(DictionarySerializer(), Serializer)
        assert not isinstance(DictionarySerializer(), Deserializer)

    def test_an_npz_deserializer_over_the_same_dict_sees_what_is_written_later(self):
        target = {}
        saver, loader = DictionarySerializer(target), NpzDeserializer(target)
        saver("a/x", numpy.arange(3.0))
        value = numpy.zeros(3)
        assert loader["a"]("x", value) is value
        numpy.testing.assert_array_equal(value, [0.0, 1.0, 2.0])


class TestRoundTrip:
    def test_values_and_types_come_back(self, tmp_path, fmt):
        path = saved(tmp_path, make_model(0), fmt=fmt)
        target = make_model(1)
        w = target.children["predictor"].children["l1"].params["W"]
        load(fmt, path, target)
        assert_same_state(target.state(), make_model(0).state())
        assert target.children["predictor"].children["l1"].params["W"] is w  # copied in place

    def test_uninitialized_param_is_initialized_from_the_file(self, tmp_path, fmt):
        source = make_model(0)
        source.children["predictor"].children["l2"].params["W"] = numpy.full((2, 3), 7.0, "f")
        path = saved(tmp_path, source, fmt=fmt)
        target = make_model(1)
        load(fmt, path, target)
        w = target.children["predictor"].children["l2"].params["W"]
        assert w.shape == (2, 3) and w.dtype == numpy.float32 and (w == 7).all()

    def test_stored_none_loads_as_none(self, tmp_path, fmt):
        path = saved(tmp_path, make_model(0), fmt=fmt)
        target = make_model(1)
        load(fmt, path, target)
        assert target.children["predictor"].children["l2"].params["W"] is None

    def test_file_objects_and_pathlib(self, tmp_path, fmt):
        buf = io.BytesIO()
        save(fmt, buf, make_model(0))
        buf.seek(0)
        target = make_model(1)
        load(fmt, buf, target)
        assert_same_state(target.state(), make_model(0).state())
        target = make_model(1)
        load(fmt, str(saved(tmp_path, make_model(0), fmt=fmt)), target)
        assert_same_state(target.state(), make_model(0).state())

    def test_dict_is_saved_as_is(self, tmp_path):
        path = tmp_path / "d.npz"
        save_npz(path, {"a": numpy.arange(3), "b/c": 1.5, "file": None})
        with numpy.load(path) as f:
            assert sorted(f.files) == ["a", "b/c", "file"]
            numpy.testing.assert_array_equal(f["a"], numpy.arange(3))
            assert f["b/c"][()] == 1.5

    def test_a_serialized_dict_with_none_is_saved_and_loads_back(self, tmp_path, fmt):
        # A snapshot serializes into a DictionarySerializer and saves its
        # target (Chainer does the same): the None it stored as
        # numpy.asarray(None) (a MaxValueTrigger before its first value) is
        # written as None (HDF5: an empty dataset, Chainer's None), and loads back as None.
        serializer = DictionarySerializer()
        serializer.save(FakeLink({"W": numpy.arange(3.0)}, {"best": None}))
        path = saved(tmp_path, serializer.target, fmt=fmt)
        if fmt == "hdf5":
            with h5py.File(path, "r") as f:
                assert f["best"].shape is None
        target = FakeLink({"W": numpy.zeros(3)}, {"best": None})
        load(fmt, path, target)
        assert target.persistents["best"] is None
        numpy.testing.assert_array_equal(target.params["W"], numpy.arange(3.0))

    def test_an_object_array_other_than_none_in_a_dict_is_still_refused(self, tmp_path):
        with pytest.raises(TypeError, match=r"save_npz: cannot store 'x'.*pickling"):
            save_npz(tmp_path / "d.npz", {"x": numpy.asarray([None], dtype=object)})
        assert not os.path.exists(tmp_path / "d.npz")

    def test_no_extension_is_added(self, tmp_path):
        save_npz(tmp_path / "snapshot_iter_10", make_model())
        assert os.listdir(tmp_path) == ["snapshot_iter_10"]

    @pytest.mark.parametrize(
        ("compression", "kind"), [(True, zipfile.ZIP_DEFLATED), (False, zipfile.ZIP_STORED)]
    )
    def test_compression_flag(self, tmp_path, compression, kind):
        model = FakeLink({"W": numpy.zeros((100, 100), numpy.float32)})
        path = saved(tmp_path, model, compression=compression)
        with zipfile.ZipFile(path) as archive:
            assert [i.compress_type for i in archive.infolist()] == [kind]
        assert (os.path.getsize(path) < 10000) == compression


class TestPath:
    def nested(self):
        return FakeLink(
            children={
                "updater": FakeLink(
                    {"iteration": numpy.array(3)}, children={"model:main": make_model(0)}
                )
            }
        )

    @pytest.mark.parametrize(
        "path", ["updater/model:main/", "updater/model:main", "/updater/model:main/"]
    )
    def test_loads_a_sub_tree(self, tmp_path, path, fmt):
        file = saved(tmp_path, self.nested(), fmt=fmt)
        target = make_model(1)
        load(fmt, file, target, path=path)
        assert_same_state(target.state(), make_model(0).state())

    def test_keys_outside_the_path_are_not_unexpected(self, tmp_path, fmt):
        file = saved(tmp_path, self.nested(), fmt=fmt)
        load(fmt, file, make_model(1), path="updater/model:main/", strict=True)

    def test_a_path_that_matches_nothing_is_named(self, tmp_path):
        file = saved(tmp_path, self.nested())
        with pytest.raises(DeserializationError, match="no key in the file starts with 'nope/'"):
            load_npz(file, make_model(1), path="nope")


class TestStrict:
    def mismatched_file(self, tmp_path, fmt="npz"):
        """A file that lacks l1/b, has an extra l3/W, and a 2x3 l1/W (the target's is 3x2)."""
        source = make_model(0)
        predictor = source.children["predictor"]
        del predictor.children["l1"].params["b"]
        predictor.children["l1"].params["W"] = numpy.zeros((2, 3), numpy.float32)
        predictor.children["l3"] = FakeLink({"W": numpy.zeros(4, numpy.float32)})
        return saved(tmp_path, source, fmt=fmt)

    def test_one_error_names_everything_and_changes_nothing(self, tmp_path, fmt):
        file = self.mismatched_file(tmp_path, fmt)
        target = make_model(1)
        before = target.state()
        with pytest.raises(DeserializationError) as info:
            load(fmt, file, target)
        e = info.value
        assert_same_state(target.state(), before)
        assert e.missing == ["predictor/l1/b"]
        assert e.unexpected == ["predictor/l3/W"]
        assert [k for k, _ in e.mismatched] == ["predictor/l1/W"]
        message = str(e)
        assert message.startswith(f"load_{fmt}: {str(file)!r} does not match the target")
        assert "'predictor/l1/b'" in message and "'predictor/l3/W'" in message
        assert (
            "'predictor/l1/W': the target holds float32 array of shape (3, 2), "
            "the file float32 array of shape (2, 3)"
        ) in message
        assert "nothing was loaded" in message

    def test_error_is_a_key_error_and_a_value_error(self, tmp_path):
        file = self.mismatched_file(tmp_path)
        with pytest.raises(KeyError):
            load_npz(file, make_model(1))
        with pytest.raises(ValueError):
            load_npz(file, make_model(1))

    def test_not_strict_skips_missing_and_unexpected_keys(self, tmp_path):
        source = make_model(0)
        del source.children["predictor"].children["l1"].params["b"]
        source.children["predictor"].children["l3"] = FakeLink({"W": numpy.zeros(4)})
        loads_keeping_target_param(tmp_path, source, "b", strict=False)

    def test_not_strict_still_refuses_shape_mismatches(self, tmp_path):
        file = self.mismatched_file(tmp_path)
        target = make_model(1)
        before = target.state()
        with pytest.raises(DeserializationError) as info:
            load_npz(file, target, strict=False)
        assert (info.value.missing, info.value.unexpected) == ([], [])
        assert [k for k, _ in info.value.mismatched] == ["predictor/l1/W"]
        assert_same_state(target.state(), before)

    @pytest.mark.parametrize(
        ("stored", "target_value", "expected"),
        [
            (
                numpy.zeros(3),
                numpy.zeros(3, numpy.int32),
                "the target holds int32 array of shape (3,), the file float64 array of shape (3,)",
            ),
            (1.5, 2, "the target holds int, the file float64 array of shape ()"),
            (1, True, "the target holds bool, the file int64 array of shape ()"),
            ("x", 1.0, "the target holds float, the file a string"),
            (numpy.zeros(1), 1.0, "the target holds float, the file float64 array of shape (1,)"),
            (None, numpy.zeros(2), "the file holds None, the target holds float64 array of shape"),
        ],
    )
    def test_type_mismatches(self, tmp_path, stored, target_value, expected):
        file = tmp_path / "x.npz"
        save_npz(file, {"v": stored})
        target = FakeLink(persistents={"v": target_value})
        with pytest.raises(DeserializationError, match="mismatched") as info:
            load_npz(file, target, strict=False)
        assert expected in str(info.value)
        assert target.persistents["v"] is target_value

    @pytest.mark.parametrize(
        ("stored", "target_value"),
        [
            (numpy.arange(3, dtype=numpy.int64), numpy.zeros(3)),  # int -> float array
            (numpy.zeros(3, numpy.float64), numpy.ones(3, numpy.float32)),  # same kind
            (3, 1.0),  # int -> float
            (numpy.int32(3), 0),  # int32 -> int
            (numpy.float32(0.5), numpy.float64(0)),  # numpy scalar
        ],
    )
    def test_compatible_types_are_converted(self, tmp_path, stored, target_value):
        file = tmp_path / "x.npz"
        save_npz(file, {"v": stored})
        target = FakeLink(persistents={"v": target_value})
        load_npz(file, target)
        value = target.persistents["v"]
        assert type(value) is type(target_value)
        numpy.testing.assert_array_equal(value, stored)


class TestIgnoreNames:
    @pytest.mark.parametrize(
        "ignore",
        [
            "predictor/l1/W",
            lambda key: key.endswith("l1/W"),
            ["predictor/nothing", lambda key: key == "predictor/l1/W"],
        ],
    )
    def test_ignored_keys_are_skipped_both_ways(self, tmp_path, ignore):
        source = make_model(0)
        source.children["predictor"].children["l1"].params["W"] = numpy.zeros(5, "f")
        loads_keeping_target_param(tmp_path, source, "W", ignore_names=ignore)

    def test_ignored_file_key_is_not_unexpected(self, tmp_path):
        source = make_model(0)
        source.children["predictor"].persistents["extra"] = 1
        file = saved(tmp_path, source)
        load_npz(file, make_model(1), ignore_names="predictor/extra")
        with pytest.raises(DeserializationError, match="'predictor/extra'"):
            load_npz(file, make_model(1))

    def test_bad_ignore_names(self, tmp_path):
        file = saved(tmp_path, make_model(0))
        with pytest.raises(ValueError, match=r"load_npz: ignore_names must be .* got 3 \(int\)"):
            load_npz(file, make_model(1), ignore_names=["ok", 3])


class TestNoUnpickling:
    def test_object_array_is_refused_naming_the_key(self, tmp_path):
        file = tmp_path / "obj.npz"
        numpy.savez(file, a=numpy.array([{}], dtype=object))
        target = FakeLink({"a": numpy.zeros(1)})
        with pytest.raises(DeserializationError) as info:
            load_npz(file, target)
        assert [k for k, _ in info.value.mismatched] == ["a"]
        assert "'a': the file holds a pickled object array" in str(info.value)
        assert "never unpickles" in str(info.value)

    def test_object_array_is_refused_even_into_an_uninitialized_param(self, tmp_path):
        file = tmp_path / "obj.npz"
        numpy.savez(file, a=numpy.array([{}], dtype=object))
        target = FakeLink({"a": None})
        with pytest.raises(DeserializationError, match="'a': the file holds a pickled"):
            load_npz(file, target, strict=False)
        assert target.params["a"] is None

    def test_malicious_pickle_is_not_run(self, tmp_path):
        marker = tmp_path / "pwned"

        class Evil:
            def __reduce__(self):
                return os.mkdir, (str(marker),)

        buf = npz_bytes({"x": (OBJECT_0D, pickle.dumps(Evil(), protocol=3))})
        with pytest.raises(DeserializationError, match="'x': the file holds a pickled"):
            load_npz(buf, FakeLink({"x": None}))
        assert not marker.exists()

    @pytest.mark.parametrize(
        "value", [numpy.asarray(0, dtype=object), numpy.asarray([None], dtype=object)]
    )
    def test_object_arrays_other_than_none_are_refused(self, value):
        header = npy_format.header_data_from_array_1_0(value)
        buf = npz_bytes({"x": (header, pickle.dumps(value, protocol=3))})
        with pytest.raises(DeserializationError, match="pickled object array"):
            load_npz(buf, FakeLink({"x": None}))

    @pytest.mark.parametrize(
        ("protocol", "module"),
        [
            (2, b"numpy.core.multiarray"),  # NumPy 1.10-1.16
            (3, b"numpy.core.multiarray"),  # NumPy 1.17-1.26 (Chainer 7's files)
            (3, b"numpy._core.multiarray"),
            (4, None),  # NumPy 2 (and 4, 5 from NumPy 1.26): as the installed NumPy writes it
            (5, None),
        ],
    )
    def test_numpy_encodings_of_none_load_as_none(self, protocol, module):
        payload = pickle.dumps(numpy.asarray(None), protocol=protocol)
        if module is not None:
            # Protocols 2 and 3 name globals as text lines, so the module is swapped in place.
            for name in (b"numpy._core.multiarray", b"numpy.core.multiarray"):
                payload = payload.replace(b"c" + name + b"\n", b"c" + module + b"\n")
            assert b"c" + module + b"\n_reconstruct" in payload
        buf = npz_bytes({"x": (OBJECT_0D, payload), "y": (OBJECT_0D, payload)})
        target = FakeLink({"x": None}, {"y": None})
        load_npz(buf, target)
        assert target.params["x"] is None and target.persistents["y"] is None

    def test_saved_none_is_read_as_none_by_numpy_with_pickling(self, tmp_path):
        file = saved(tmp_path, FakeLink({"W": None}))
        with zipfile.ZipFile(file) as archive:
            payload = archive.read("W.npy")
        assert b"cnumpy.core.multiarray\n_reconstruct" in payload  # what NumPy 1.x readers need
        with numpy.load(file, allow_pickle=True) as f:
            assert f["W"][()] is None


class TestChainerFile:
    def load(self, **kwargs):
        target = make_model(1)
        load_npz(io.BytesIO(base64.b64decode("".join(CHAINER_NPZ))), target, **kwargs)
        return target

    def test_chainer_7_file_loads(self):
        p = self.load().children["predictor"]
        l1, l2, bn = p.children["l1"], p.children["l2"], p.children["bn"]
        numpy.testing.assert_array_equal(
            l1.params["W"], numpy.arange(6, dtype="f").reshape(3, 2) / 10
        )
        numpy.testing.assert_array_equal(l1.params["b"], [1, 2, 3])
        numpy.testing.assert_array_equal(l2.params["b"], [-1, -2])
        assert l2.params["W"] is None
        numpy.testing.assert_array_equal(bn.params["gamma"], [2, 2, 2])
        numpy.testing.assert_array_equal(bn.params["beta"], [0.5, 0.5, 0.5])
        numpy.testing.assert_array_equal(bn.persistents["avg_mean"], [1, 2, 3])
        numpy.testing.assert_array_equal(bn.persistents["avg_var"], [4, 5, 6])
        assert p.persistents == {"scale": 0.25, "count": 9, "flag": False, "tag": "abc"}
        assert type(p.persistents["count"]) is int and bn.persistents["N"] == 5

    def test_chainer_keys_are_ours(self):
        with numpy.load(io.BytesIO(base64.b64decode("".join(CHAINER_NPZ)))) as f:
            assert set(f.files) == CHAINER_KEYS


class TestAtomicSave:
    class Exploding:
        def serialize(self, serializer):
            serializer("a", numpy.zeros(3))
            raise RuntimeError("boom")

    def test_failing_serialize_leaves_no_file(self, tmp_path, fmt):
        with pytest.raises(RuntimeError, match="boom"):
            save(fmt, tmp_path / FORMATS[fmt][2], self.Exploding())
        assert os.listdir(tmp_path) == []

    def test_failing_serialize_leaves_the_old_file_untouched(self, tmp_path, fmt):
        path = saved(tmp_path, make_model(0), fmt=fmt)
        old = path.read_bytes()
        with pytest.raises(RuntimeError, match="boom"):
            save(fmt, path, self.Exploding())
        assert path.read_bytes() == old
        assert os.listdir(tmp_path) == [path.name]

    def test_failure_while_writing_leaves_the_old_file_untouched(self, tmp_path, monkeypatch):
        path = saved(tmp_path, make_model(0), name="m.npz")
        old = path.read_bytes()
        real = npy_format.write_array
        calls = []

        def write_then_fail(fp, array, **kwargs):
            calls.append(1)
            if len(calls) == 3:
                fp.write(b"partial")
                raise OSError("disk full")
            real(fp, array, **kwargs)

        monkeypatch.setattr(npy_format, "write_array", write_then_fail)
        with pytest.raises(OSError, match="disk full"):
            save_npz(path, make_model(1))
        assert path.read_bytes() == old
        assert os.listdir(tmp_path) == ["m.npz"]

    def test_overwrites_an_existing_file(self, tmp_path, fmt):
        path = saved(tmp_path, make_model(0), fmt=fmt)
        save(fmt, path, make_model(2))
        target = make_model(1)
        load(fmt, path, target)
        assert_same_state(target.state(), make_model(2).state())

    @pytest.mark.skipif(os.name != "posix", reason="file modes and umask are POSIX")
    def test_mode_follows_the_umask(self, tmp_path, fmt):
        old = os.umask(0o027)
        try:
            path = saved(tmp_path, make_model(0), fmt=fmt)
        finally:
            os.umask(old)
        assert path.stat().st_mode & 0o777 == 0o640


class TestNpzDeserializer:
    def test_direct_use(self, tmp_path):
        path = saved(tmp_path, make_model(0))
        w = numpy.zeros((3, 2), numpy.float32)
        with numpy.load(path) as f:
            d = NpzDeserializer(f)
            assert d["predictor"]["l1"]("W", w) is w
            assert d("predictor/count", 0) == 7
            assert d["predictor"]("l2/W", None) is None
            b = d["predictor/l2"]("b", None)
        expected = make_model(0).children["predictor"]
        numpy.testing.assert_array_equal(w, expected.children["l1"].params["W"])
        numpy.testing.assert_array_equal(b, expected.children["l2"].params["b"])

    def test_direct_missing_key(self, tmp_path):
        path = saved(tmp_path, make_model(0))
        with numpy.load(path) as f:
            with pytest.raises(KeyError, match=r"NpzDeserializer: key 'predictor/zz' is missing"):
                NpzDeserializer(f, path="predictor")("zz", 1.0)
            assert NpzDeserializer(f, strict=False)("zz", 1.5) == 1.5

    def test_direct_mismatch(self, tmp_path):
        path = saved(tmp_path, make_model(0))
        with (
            numpy.load(path) as f,
            pytest.raises(DeserializationError, match="cannot load 'predictor/l1/W'"),
        ):
            NpzDeserializer(f)("predictor/l1/W", numpy.zeros(3))

    def test_load_checks_first(self, tmp_path):
        path = saved(tmp_path, make_model(0))
        target = make_model(1)
        target.children["predictor"].children["l1"].params["b"] = numpy.zeros(9, "f")
        before = target.state()
        with numpy.load(path) as f, pytest.raises(DeserializationError, match="NpzDeserializer"):
            NpzDeserializer(f).load(target)
        assert_same_state(target.state(), before)

    def test_dict_of_arrays(self):
        d = NpzDeserializer({"a/x": numpy.arange(3.0), "a/n": numpy.asarray(None)})
        target = FakeLink(children={"a": FakeLink({"x": numpy.zeros(3), "n": None})})
        d.load(target)
        numpy.testing.assert_array_equal(target.children["a"].params["x"], [0, 1, 2])
        assert target.children["a"].params["n"] is None

    def test_npy_file_is_rejected(self, tmp_path):
        path = tmp_path / "a.npy"
        numpy.save(path, numpy.zeros(3))
        with pytest.raises(ValueError, match=r"load_npz: '.*a.npy' is a .npy array, not an NPZ"):
            load_npz(path, make_model())


class DataDependent:
    """A target whose keys depend on a stored JSON list of names, like DictSummary."""

    def __init__(self, names=()):
        self.values = dict.fromkeys(names, 0.0)
        self.dry_runs = []

    def serialize(self, serializer):
        if isinstance(serializer, Serializer):
            serializer("_names", ",".join(self.values))
            for name, value in self.values.items():
                serializer[name]("v", value)
            return
        self.dry_runs.append(serializer.dry_run)
        names = serializer("_names", "")
        values = {name: serializer[name]("v", 0.0) for name in names.split(",") if name}
        if not serializer.dry_run:
            self.values = values


class TestDryRun:
    def test_a_data_dependent_target_is_checked_and_untouched_in_the_dry_run(self, tmp_path):
        source = DataDependent(["a", "b"])
        source.values = {"a": 1.0, "b": 2.0}
        path = saved(tmp_path, source)
        target = DataDependent(["c"])
        load_npz(path, target)
        assert target.dry_runs == [True, False]
        assert target.values == {"a": 1.0, "b": 2.0}

    def test_the_dry_run_changes_nothing_when_the_check_fails(self, tmp_path):
        path = saved(tmp_path, {"_names": "a,b", "a/v": 1.0, "b/v": "oops"})
        target = DataDependent(["c"])
        with pytest.raises(DeserializationError, match="'b/v': the target holds float"):
            load_npz(path, target)
        assert target.values == {"c": 0.0}


def test_package_exports():
    assert serializers.save_npz is save_npz and serializers.load_npz is load_npz
    assert issubclass(NpzDeserializer, Deserializer)


def test_npz_serialize_returns_the_dictionary_save_npz_writes(tmp_path):
    from dbr.core.serializers import npz

    target = npz.serialize(make_model())
    assert isinstance(target, dict) and set(target) == CHAINER_KEYS
    save_npz(tmp_path / "m.npz", make_model())
    with numpy.load(tmp_path / "m.npz", allow_pickle=False) as f:
        assert set(f.files) == CHAINER_KEYS
        numpy.testing.assert_array_equal(f["predictor/l1/W"], target["predictor/l1/W"])


@pytest.mark.parametrize(
    ("stored", "target_value"),
    [(numpy.float32(-(2.0**60)), 5), (numpy.int64(-(2**60)), numpy.uint32(5))],
)
def test_a_value_that_does_not_fit_a_scalar_is_a_type_error_as_in_chainer(
    tmp_path, stored, target_value
):
    save_npz(tmp_path / "x.npz", {"z": stored})
    with (
        numpy.load(tmp_path / "x.npz", allow_pickle=False) as npz,
        pytest.raises(TypeError, match="'z'.*the target holds") as info,
    ):
        NpzDeserializer(npz)("z", target_value)
    assert isinstance(info.value, DeserializationError)


def test_error_message_is_not_repr_quoted():
    e = DeserializationError("line one\nline two", file="f")
    assert str(e) == "line one\nline two"


# -- HDF5 only ------------------------------------------------------------------------


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


def test_hdf5_available_answers_whether_h5py_imports_now(monkeypatch):
    from dbr.core.serializers import hdf5

    assert hdf5._available is (h5py is not None)
    monkeypatch.setitem(sys.modules, "h5py", None)
    assert hdf5._available is False
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = hdf5.no_such_name


@needs_h5py
def test_hdf5_deserializer_child_group_is_the_subgroup(tmp_path):
    path = saved(tmp_path, make_model(), fmt="hdf5")
    with h5py.File(path, "r") as f:
        d = HDF5Deserializer(f)
        assert d.group is f
        assert d["predictor"]["l1"].group.name == "/predictor/l1"
        assert d["predictor"]["nothing"].group is None


@needs_h5py
def test_storing_none_needs_h5py_with_empty(monkeypatch, tmp_path):
    monkeypatch.setattr(h5py.version, "version_tuple", (2, 6, 0))
    with (
        h5py.File(tmp_path / "m.h5", "w") as f,
        pytest.raises(RuntimeError, match=r"'x'.*h5py>=2.7.0"),
    ):
        HDF5Serializer(f)("x", None)


@needs_h5py
class TestHDF5Layout:
    def test_a_group_per_path_component(self, tmp_path):
        path = saved(tmp_path, make_model(), fmt="hdf5")
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
        model = FakeLink({"W": numpy.zeros(8), "one": numpy.zeros(1)})
        path = saved(tmp_path, model, fmt="hdf5", compression=9)
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


@needs_h5py
class TestHDF5Files:
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
class TestHDF5Checks:
    def test_strict_false_and_ignore_names(self, tmp_path):
        source = make_model(0)
        p = source.children["predictor"]
        del p.children["l1"].params["b"]
        p.children["l1"].params["W"] = numpy.zeros((2, 3), "f")
        p.persistents["extra"] = 1
        path = saved(tmp_path, source, fmt="hdf5")
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
        path = saved(tmp_path, make_model(0), fmt="hdf5")
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


def _snapshot_of(model, drop=0):
    """A trainer snapshot's layout: the model under 'updater/model:main/', beside other state."""
    serializer = DictionarySerializer(path="updater/model:main/")
    model.serialize(serializer)
    arrays = dict(sorted(serializer.target.items())[drop:])
    return {**arrays, "updater/iteration": numpy.array(5), "stop_trigger/count": numpy.array(0)}


def _simple_model(seed=0):
    rng = numpy.random.default_rng(seed)
    return FakeLink({"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(3)})


def test_a_trainer_snapshot_loaded_into_its_model_names_the_path_to_load_with(tmp_path):
    model = _simple_model()
    numpy.savez(tmp_path / "snapshot.npz", **_snapshot_of(model))
    with pytest.raises(DeserializationError) as info:
        load_npz(tmp_path / "snapshot.npz", _simple_model(1))
    assert (
        "the file holds every one of them under 'updater/model:main/' (a trainer snapshot): "
        "load with path='updater/model:main/'"
    ) in str(info.value)
    fresh = _simple_model(1)
    load_npz(tmp_path / "snapshot.npz", fresh, path="updater/model:main/")
    numpy.testing.assert_array_equal(fresh.params["W"], model.params["W"])


def test_no_path_is_suggested_when_the_file_lacks_some_key(tmp_path):
    numpy.savez(tmp_path / "partial.npz", **_snapshot_of(_simple_model(), drop=1))
    with pytest.raises(DeserializationError) as info:
        load_npz(tmp_path / "partial.npz", _simple_model())
    assert "load with path=" not in str(info.value)
