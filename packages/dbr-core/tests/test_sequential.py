import functools

import numpy
import pytest

from dbr.core import Parameter, initializers, ops
from dbr.core.link import Chain, ChainList, Link
from dbr.core.sequential import Sequential


class Linear(Link):
    """y = x W^T + b, with the input size inferred at the first call when None."""

    def __init__(self, in_size, out_size=None):
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        self.in_size, self.out_size = in_size, out_size
        with self.init_scope():
            shape = None if in_size is None else (out_size, in_size)
            self.W = Parameter(initializers.Normal(), shape)
            self.b = Parameter(0, (out_size,))

    @property
    def printable_specs(self):
        yield "in_size", self.in_size
        yield "out_size", self.out_size

    def forward(self, x):
        if self.W.array is None:
            self.W.initialize((self.out_size, x.shape[1]))
        return ops.matmul(x, self.W, transb=True) + self.b


class Scale(Link):
    """A parameter-free callable link, handy for identity checks."""

    def forward(self, x):
        return x * 3


def double(x):
    return x * 2


class AddOne:
    def __call__(self, x):
        return x + 1


def ones(*shape):
    return numpy.ones(shape, numpy.float32)


def child_names(seq):
    return [child.name for child in seq.children()]


# -- forward ------------------------------------------------------------------------


def test_forward_applies_links_and_functions_in_order():
    l1, l2 = Linear(4, 3), Linear(3, 2)
    model = Sequential(l1, double, l2, AddOne())
    x = numpy.arange(8, dtype=numpy.float32).reshape(2, 4)
    h = (x @ l1.W.array.T + l1.b.array) * 2
    expected = h @ l2.W.array.T + l2.b.array + 1
    numpy.testing.assert_allclose(model(x).array, expected, rtol=1e-6)


def test_tuple_outputs_are_unpacked_into_the_next_layer():
    model = Sequential(lambda a, b: (a + b, a - b), lambda s, d: s * d)
    assert model(5, 3) == 16


def test_empty_sequential_returns_its_input():
    x = ones(2)
    assert Sequential()(x) is x
    assert Sequential()(1, 2) == (1, 2)


def test_gradients_reach_the_parameters_of_every_link():
    model = Sequential(Linear(2), double, Linear(1))
    model(ones(3, 4))
    model.cleargrads()
    ops.sum(model(ones(3, 4))).backward()
    assert all(p.grad is not None for p in model.params())
    numpy.testing.assert_allclose(model[2].b.grad, [3.0])


def test_only_links_are_children_and_they_are_numbered_among_themselves():
    model = Sequential(Linear(2, 2), double, Linear(2, 1))
    assert [path for path, _ in model.namedparams()] == ["/0/W", "/0/b", "/1/W", "/1/b"]
    assert list(model.children()) == [model[0], model[2]]
    assert child_names(model) == ["0", "1"]


def test_sequential_inside_a_chain():
    outer = Chain()
    with outer.init_scope():
        outer.seq = Sequential(double, Linear(2, 2))
    assert [path for path, _ in outer.namedparams()] == ["/seq/0/W", "/seq/0/b"]


def test_non_callable_layers_are_rejected():
    with pytest.raises(TypeError, match="Sequential.append: expected a callable layer.*int 3"):
        Sequential(3)
    model = Sequential(double)
    with pytest.raises(TypeError, match="Sequential.insert: expected a callable"):
        model.insert(0, "x")
    with pytest.raises(TypeError, match="Sequential.__setitem__: expected a callable"):
        model[0] = None
    with pytest.raises(TypeError, match="__setitem__"):
        model[0:1] = [double, 1]
    assert list(model) == [double]


# -- list interface -----------------------------------------------------------------


def test_append_extend_and_insert_keep_children_in_order():
    a, b, c, d = Scale(), Scale(), Scale(), Scale()
    model = Sequential(a)
    model.append(double)
    model.extend([b, AddOne])
    assert len(model) == 4 and model[3] is AddOne
    model.insert(0, c)
    model.insert(-1, d)
    assert list(model) == [c, a, double, b, d, AddOne]
    assert list(model.children()) == [c, a, b, d]
    assert child_names(model) == ["0", "1", "2", "3"]
    assert (c.name, a.name, b.name, d.name) == ("0", "1", "2", "3")


def test_getitem_setitem_delitem():
    a, b, c = Scale(), Scale(), Scale()
    model = Sequential(a, double, b)
    assert model[-1] is b
    assert model[:2] == [a, double]
    model[0] = AddOne()
    assert list(model.children()) == [b] and b.name == "0"
    model[1] = c
    assert list(model.children()) == [c, b] and c.name == "0" and b.name == "1"
    model[0:2] = [a]
    assert list(model) == [a, b] and b.name == "1"
    del model[0]
    assert list(model) == [b] and b.name == "0"
    model.append(c)
    del model[:]
    assert len(model) == 0 and list(model.children()) == []
    with pytest.raises(IndexError):
        model[0] = double


def test_pop_remove_clear_index_count():
    a, b = Scale(), Scale()
    model = Sequential(a, double, b, double)
    assert model.pop() is double
    assert model.pop(0) is a
    assert list(model) == [double, b] and b.name == "0"
    model.remove(double)
    assert list(model) == [b]
    with pytest.raises(ValueError, match="Sequential.remove: .* is not a layer"):
        model.remove(double)
    model.extend([double, a, double])
    assert model.index(double) == 1
    assert model.index(double, 2) == 3
    with pytest.raises(ValueError):
        model.index(double, 2, 3)
    assert model.count(double) == 2
    model.clear()
    assert len(model) == 0 and list(model.children()) == [] and list(model.params()) == []


def test_reverse_contains_reversed_iter():
    a, b = Scale(), Scale()
    model = Sequential(a, double, b)
    assert list(reversed(model)) == [b, double, a]
    assert list(model) == [a, double, b]
    assert double in model and AddOne not in model
    model.reverse()
    assert list(model) == [b, double, a]
    assert (b.name, a.name) == ("0", "1")


def test_layer_types():
    model = Sequential(Linear(2, 2), double, Scale(), double, AddOne(), Linear(2, 2))
    assert model.count_by_layer_type("Linear") == 2
    assert model.count_by_layer_type("double") == 2
    assert model.count_by_layer_type("AddOne") == 1
    assert model.count_by_layer_type("relu") == 0
    model.remove_by_layer_type("double")
    assert [type(layer).__name__ for layer in model] == ["Linear", "Scale", "AddOne", "Linear"]
    model.remove_by_layer_type("Linear")
    assert [type(layer).__name__ for layer in model] == ["Scale", "AddOne"]
    assert child_names(model) == ["0"]


def test_add_radd_iadd():
    a, b = Scale(), Scale()
    left, right = Sequential(a, double), Sequential(b)
    both = left + right
    assert isinstance(both, Sequential) and list(both) == [a, double, b]
    assert len(left) == 2 and len(right) == 1
    assert list(left + b) == [a, double, b]
    assert list(b + left) == [b, a, double]
    assert list(double + right) == [double, b]
    left += right
    assert list(left) == [a, double, b]
    left += AddOne
    assert left[-1] is AddOne
    right += right
    assert list(right) == [b, b]
    with pytest.raises(TypeError, match="Sequential.\\+: expected a callable layer"):
        left + 3
    with pytest.raises(TypeError, match="Sequential.\\+: expected a callable layer"):
        3 + left
    with pytest.raises(TypeError, match="Sequential.\\+=: expected a callable layer"):
        left += "x"


def test_flatten_expands_nested_sequentials():
    l1, l2, l3 = Linear(2, 2), Linear(2, 2), Linear(2, 1)
    inner = Sequential(l2, Sequential(double, l3))
    model = Sequential(l1, inner, AddOne)
    flat = model.flatten()
    assert list(flat) == [l1, l2, double, l3, AddOne]
    assert [path for path, _ in flat.namedparams()][::2] == ["/0/W", "/1/W", "/2/W"]
    assert list(model) == [l1, inner, AddOne]


# -- copies -------------------------------------------------------------------------


def test_copy_share_copies_links_sharing_arrays_and_keeps_functions():
    lin = Linear(2, 2)
    part = functools.partial(numpy.multiply, 2)
    model = Sequential(lin, double, part)
    shared = model.copy()
    assert type(shared) is Sequential
    assert shared[0] is not lin and shared[0].W.array is lin.W.array
    assert shared[1] is double
    assert shared[2] is not part and shared[2].func is numpy.multiply
    assert list(shared.children()) == [shared[0]] and shared[0].name == "0"
    shared.append(double)
    assert len(model) == 3


@pytest.mark.parametrize("mode", ["share", "copy", "init"])
def test_copy_keeps_a_link_used_twice_as_one_link(mode):
    lin = Linear(2, 2)
    copied = Sequential(lin, double, lin).copy(mode)
    assert copied[0] is copied[2]
    assert copied[0] is not lin
    assert copied.children().__next__() is copied[0]


def test_copy_copy_and_init_values():
    lin = Linear(2, 2)
    lin.b.array[...] = 4
    model = Sequential(lin, double)
    copied = model.copy("copy")
    numpy.testing.assert_array_equal(copied[0].W.array, lin.W.array)
    assert copied[0].W.array is not lin.W.array
    numpy.testing.assert_array_equal(copied[0].b.array, [4.0, 4.0])
    fresh = model.copy("init")
    numpy.testing.assert_array_equal(fresh[0].b.array, [0.0, 0.0])
    assert not numpy.array_equal(fresh[0].W.array, lin.W.array)
    assert fresh[1] is double


def test_repeat_of_a_sequential():
    block = Sequential(Linear(2, 2), double)
    net = block.repeat(2)
    assert len(net) == 2 and all(isinstance(b, Sequential) for b in net)
    assert [path for path, _ in net.namedparams()] == ["/0/0/W", "/0/0/b", "/1/0/W", "/1/0/b"]
    assert net[0][1] is double


# -- serialization and printing -----------------------------------------------------


class RecordingSerializer:
    def __init__(self, path="", log=None):
        self.path = path
        self.log = [] if log is None else log

    def __getitem__(self, name):
        return RecordingSerializer(f"{self.path}/{name}", self.log)

    def __call__(self, key, value):
        self.log.append(f"{self.path}/{key}")
        return value


def test_serialize_numbers_links_only():
    model = Sequential(double, Linear(2, 2), AddOne(), Linear(2, 1))
    serializer = RecordingSerializer()
    model.serialize(serializer)
    assert serializer.log == ["/0/W", "/0/b", "/1/W", "/1/b"]


def test_str_shows_links_functions_lambdas_and_nesting():
    model = Sequential(
        Linear(2, 3),
        lambda x: x * 2,
        double,
        Sequential(Linear(3), AddOne),
    )
    expected = (
        "Sequential(\n"
        "  (0): Linear(in_size=2, out_size=3),\n"
        "  (1): lambda x: x * 2,\n"
        f"  (2): {double},\n"
        "  (3): Sequential(\n"
        "    (0): Linear(in_size=None, out_size=3),\n"
        f"    (1): {AddOne},\n"
        "  ),\n"
        ")"
    )
    assert str(model) == expected
    assert repr(model) == expected
    assert str(Sequential()) == "Sequential()"


def test_sequential_is_a_chainlist_that_refuses_link_attributes():
    model = Sequential()
    assert isinstance(model, ChainList)
    with pytest.raises(TypeError, match="cannot register link"), model.init_scope():
        model.extra = Scale()
