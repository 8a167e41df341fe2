"""dbr.chainer.testing's parameterize, product, product_dict and generated class names."""

import sys
import textwrap
import unittest

import numpy
import pytest

from dbr.chainer import testing
from dbr.chainer.testing import parameterized

pytest_plugins = ["pytester"]

MARKERS = ["gpu", "cudnn", "multi_gpu", "ideep", "slow", "chainerx", "theano"]


def run_file(pytester, source, *args):
    """Run ``source`` as a test file in a subprocess; return (result, collected node ids)."""
    pytester.makeini(
        "[pytest]\nmarkers =\n" + "".join(f"    {m}: chainer mark\n" for m in MARKERS)
    )
    pytester.makepyfile(test_ported=textwrap.dedent(source))
    ids = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--co", "-q", *args)
    collected = [line for line in ids.outlines if "::" in line]
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-rs", *args)
    return result, collected


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        ({"mode": tuple}, "TestA_param_3_{mode=tuple}"),
        ({"dtype": numpy.float16, "shape": (3, 2)}, "TestA_param_3_{dtype=float16, shape=(3, 2)}"),
        ({"shape": (), "dtype": numpy.float64}, "TestA_param_3_{dtype=float64, shape=()}"),
        ({"reduce": "mean", "n": None}, "TestA_param_3_{n=None, reduce='mean'}"),
        ({"f": numpy.exp, "g": len}, "TestA_param_3_{f=exp, g=len}"),
        ({"f": lambda x: x}, "TestA_param_3_{f=<lambda>}"),
        ({"x": numpy.float32(1.53), "b": numpy.bool_}, "TestA_param_3_{b=bool_, x=1.53}"),
        ({"t": (None, numpy.float32(0.5))}, "TestA_param_3_{t=(None, 0.5)}"),
        ({"d": {"k": [1, 2]}}, "TestA_param_3_{d={'k': [1, 2]}}"),
        ({}, "TestA_param_3_{}"),
    ],
)
def test_class_name_formats_values_as_chainer(param, expected):
    assert parameterized.class_name("TestA", 3, param) == expected


def test_class_name_shortens_long_values_in_the_middle():
    name = parameterized.class_name("T", 0, {"s": "x" * 50 + "y" * 100})
    value = name[len("T_param_0_{s=") : -1]
    assert len(value) == 100
    assert value == "'" + "x" * 47 + "..." + "y" * 48 + "'"


def test_product_of_dict_sorts_keys_and_splits_comma_keys():
    assert testing.product({"b": [1, 2], "a": ["x"]}) == [
        {"a": "x", "b": 1},
        {"a": "x", "b": 2},
    ]
    assert testing.product({"shape,axis": [((2, 3), 0), ((4,), -1)]}) == [
        {"shape": (2, 3), "axis": 0},
        {"shape": (4,), "axis": -1},
    ]
    assert testing.product({}) == [{}]
    assert testing.product({"a": [1], "b": []}) == []


def test_product_of_lists_merges_dicts():
    assert testing.product([[{"a": 1, "b": 3}, {"a": 2, "b": 4}], [{"c": 5}]]) == [
        {"a": 1, "b": 3, "c": 5},
        {"a": 2, "b": 4, "c": 5},
    ]
    assert testing.product([]) == [{}]
    with pytest.raises(TypeError):
        testing.product([{"a": 1}])
    with pytest.raises(TypeError):
        testing.product(3)


def test_product_dict_later_keys_win():
    assert testing.product_dict([{"a": 1}], [{"a": 2, "b": 3}]) == [{"a": 2, "b": 3}]
    assert testing.product_dict() == [{}]


def test_pairwise_product_covers_every_pair_with_fewer_combinations():
    lists = [
        [{"a": i} for i in range(3)],
        [{"b": i} for i in range(3)],
        [{"c": i} for i in range(3)],
    ]
    combos = parameterized._pairwise_product_dict(*lists)
    assert len(combos) < 27
    for x, y in [("a", "b"), ("a", "c"), ("b", "c")]:
        assert {(d[x], d[y]) for d in combos} == {(i, j) for i in range(3) for j in range(3)}


def test_parameterize_pytest_builds_dicts():
    assert parameterized.from_pytest_parameterize("a,b", [(1, 2), (3, 4)]) == [
        {"a": 1, "b": 2},
        {"a": 3, "b": 4},
    ]
    assert parameterized.from_pytest_parameterize("a", [(1, 2)]) == [{"a": (1, 2)}]


def test_parameterize_registers_classes_in_the_module_and_hides_the_original():
    module = sys.modules[__name__]

    @testing.parameterize({"value": 1}, {"value": lambda x: x * 2})
    class TestLocal(unittest.TestCase):
        def test_it(self):
            pass

    try:
        assert not isinstance(TestLocal, type)
        first = getattr(module, "TestLocal_param_0_{value=1}")
        second = getattr(module, "TestLocal_param_1_{value=<lambda>}")
        assert first.value == 1
        assert second("test_it").value(4) == 8
        assert first.__name__ == "TestLocal_param_0_{value=1}"
    finally:
        for case in TestLocal.cases:
            delattr(module, case.class_name)


def test_failure_is_reraised_with_the_parameters_and_the_same_type():
    module = sys.modules[__name__]

    class Boom(ValueError):
        pass

    @testing.parameterize({"x": 3})
    class TestFailing(unittest.TestCase):
        def test_it(self):
            raise Boom("original")

    try:
        cls = TestFailing.cases[0].klass
        with pytest.raises(Boom) as info:
            cls("test_it").test_it()
        assert "Test parameters:\n  x: 3" in str(info.value)
        assert "original" in str(info.value)
    finally:
        delattr(module, TestFailing.cases[0].class_name)


def test_node_ids_of_stacked_decorators_match_chainer(pytester):
    result, ids = run_file(
        pytester,
        """
        import unittest
        import numpy
        from dbr.chainer import testing


        @testing.parameterize(*testing.product({'shape': [(3, 2)], 'dtype': [numpy.float16]}))
        @testing.fix_random()
        @testing.inject_backend_tests(None, [{}, {'use_cuda': True}])
        class TestA(unittest.TestCase):
            def setUp(self):
                pass

            def tearDown(self):
                pass

            def test_x(self, backend_config):
                assert backend_config.xp is numpy


        @testing.parameterize({'mode': tuple}, {'mode': None})
        class TestPlain:
            def test_y(self):
                assert self.mode in (tuple, None)


        @testing.parameterize({'p': 1}, {'p': 2})
        @testing.parameterize({'q': 'a'})
        class TestTwice(unittest.TestCase):
            def test_z(self):
                assert (self.p, self.q) in ((1, 'a'), (2, 'a'))


        testing.run_module(__name__, __file__)
        """,
        "-m",
        "not gpu",
    )
    backend = (
        "use_chainerx_false__chainerx_device_None__use_cuda_false__cuda_device_None__"
        "use_cudnn_never__cudnn_deterministic_false__autotune_false__"
        "cudnn_fast_batch_normalization_false__use_ideep_never"
    )
    assert sorted(ids) == sorted(
        [
            f"test_ported.py::TestA_{backend}_param_0_{{dtype=float16, shape=(3, 2)}}::test_x",
            "test_ported.py::TestPlain_param_0_{mode=tuple}::test_y",
            "test_ported.py::TestPlain_param_1_{mode=None}::test_y",
            "test_ported.py::TestTwice_param_0_{q='a'}_param_0_{p=1}::test_z",
            "test_ported.py::TestTwice_param_0_{q='a'}_param_1_{p=2}::test_z",
        ]
    )
    result.assert_outcomes(passed=5, deselected=1)
