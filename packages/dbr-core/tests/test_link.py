import numpy
import pytest

from dbr.core import Parameter, Variable, backend, initializers, ops
from dbr.core.link import Chain, ChainList, Link
from dbr.core.sequential import Sequential


class Linear(Link):
    """y = x W^T + b, with the input size inferred at the first call when None."""

    def __init__(self, in_size, out_size=None, nobias=False):
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        self.in_size, self.out_size, self.nobias = in_size, out_size, nobias
        with self.init_scope():
            shape = None if in_size is None else (out_size, in_size)
            self.W = Parameter(initializers.Normal(), shape)
            if not nobias:
                self.b = Parameter(0, (out_size,))

    @property
    def printable_specs(self):
        yield "in_size", self.in_size
        yield "out_size", self.out_size
        yield "nobias", self.nobias

    def forward(self, x):
        if self.W.array is None:
            self.W.initialize((self.out_size, x.shape[1]), device=self.device)
        y = ops.matmul(x, self.W, transb=True)
        return y if self.nobias else y + self.b


class MLP(Chain):
    def __init__(self, n_hidden=3, n_out=2):
        super().__init__()
        with self.init_scope():
            self.l1 = Linear(n_hidden)
            self.l2 = Linear(n_hidden, n_out)

    def forward(self, x):
        return self.l2(self.l1(x))


class WithStats(Link):
    """A link with a parameter and persistent values, like batch normalization."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.gamma = Parameter(1.0, (2,))
        self.add_persistent("mean", numpy.zeros(2, numpy.float32))
        self.add_persistent("N", 0)


def ones(*shape):
    return numpy.ones(shape, numpy.float32)


def loss_of(link, x):
    return ops.sum(link(x))


class RecordingSerializer:
    """Records (path, value) for every call; returns the value, or the one stored for the path."""

    def __init__(self, path="", log=None, stored=None):
        self.path = path
        self.log = [] if log is None else log
        self.stored = {} if stored is None else stored

    def __getitem__(self, name):
        return RecordingSerializer(f"{self.path}/{name}", self.log, self.stored)

    def __call__(self, key, value):
        path = f"{self.path}/{key}"
        self.log.append((path, value))
        return self.stored.get(path, value)


class Rule:
    def __init__(self, enabled):
        self.enabled = enabled


# -- registration -------------------------------------------------------------------


def test_init_scope_registers_parameters_and_plain_assignment_does_not():
    link = Link()
    assert not link.within_init_scope
    with link.init_scope():
        assert link.within_init_scope
        link.W = Parameter(0.0, (2,))
    link.V = Parameter(0.0, (3,))
    assert not link.within_init_scope
    assert [path for path, _ in link.namedparams()] == ["/W"]
    assert link.W.name == "W"
    assert link.V.name is None


def test_init_scope_flag_is_restored_after_an_exception():
    link = Link()
    with pytest.raises(RuntimeError), link.init_scope():
        raise RuntimeError("boom")
    assert not link.within_init_scope


def test_chain_registers_links_only_inside_init_scope():
    chain = Chain()
    child, other = Link(), Link()
    with chain.init_scope():
        chain.child = child
    chain.other = other
    assert list(chain.children()) == [child]
    assert child.name == "child"
    assert other.name is None


def test_chain_refuses_to_register_over_an_existing_attribute():
    chain = Chain()
    chain.l1 = 3
    with pytest.raises(AttributeError, match="'l1'.*already exists"), chain.init_scope():
        chain.l1 = Link()
    with pytest.raises(AttributeError, match="'forward'"), chain.init_scope():
        chain.forward = Link()


def test_chain_keyword_links_and_add_link():
    a, b = Link(), Link()
    chain = Chain(a=a)
    chain.add_link("b", b)
    assert [path for path, _ in chain.namedlinks(skipself=True)] == ["/a", "/b"]
    assert chain["b"] is b
    with pytest.raises(AttributeError, match="add_link.*'b'"):
        chain.add_link("b", Link())
    with pytest.raises(TypeError, match="add_link: expected link to be a Link, got int"):
        chain.add_link("c", 3)


def test_add_param_creates_nan_filled_parameter_of_given_dtype():
    link = Link()
    link.add_param("W", (2, 3), dtype=numpy.float64)
    link.add_param("lazy")
    link.add_param("c", (2,), initializer=initializers.Constant(4.0))
    assert link.W.shape == (2, 3)
    assert link.W.dtype == numpy.float64
    assert numpy.isnan(link.W.array).all()
    assert link.lazy.array is None
    numpy.testing.assert_array_equal(link.c.array, [4.0, 4.0])
    assert sorted(path for path, _ in link.namedparams()) == ["/W", "/c", "/lazy"]
    with pytest.raises(AttributeError, match="add_param: cannot register parameter 'W'"):
        link.add_param("W", (1,))


def test_old_style_parameter_shapes_in_constructor():
    link = Link(W=(3, 2), b=((2,), numpy.float64), lazy=None)
    assert link.W.shape == (3, 2)
    assert link.W.dtype == numpy.float32
    assert link.b.dtype == numpy.float64
    assert link.lazy.array is None
    with pytest.raises(TypeError, match="parameter 'x'.*shape.*got 'abc'"):
        Link(x="abc")


def test_persistent_values():
    link = WithStats()
    assert link.N == 0
    with pytest.raises(AttributeError, match="add_persistent: .*'mean'"):
        link.add_persistent("mean", 1)
    link.extra = 5
    link.register_persistent("extra")
    with pytest.raises(AttributeError, match="register_persistent: .*'missing'"):
        link.register_persistent("missing")
    link.register_persistent("gamma")
    assert list(link.params()) == []
    serializer = RecordingSerializer()
    link.serialize(serializer)
    assert [path for path, _ in serializer.log] == ["/N", "/extra", "/gamma", "/mean"]


def test_delattr_unregisters_params_persistents_and_children():
    link = WithStats()
    del link.gamma
    del link.mean
    serializer = RecordingSerializer()
    link.serialize(serializer)
    assert [path for path, _ in serializer.log] == ["/N"]
    model = MLP()
    del model.l1
    assert [path for path, _ in model.namedparams()] == ["/l2/W", "/l2/b"]
    assert not hasattr(model, "l1")


# -- traversal ----------------------------------------------------------------------


def test_namedparams_paths_and_order():
    outer = Chain()
    with outer.init_scope():
        outer.p = Parameter(0.0, (1,))
        outer.net = MLP()
        outer.stack = ChainList(Linear(2, 2), Linear(2, 1, nobias=True))
    paths = [path for path, _ in outer.namedparams()]
    assert paths == [
        "/p",
        "/net/l1/W",
        "/net/l1/b",
        "/net/l2/W",
        "/net/l2/b",
        "/stack/0/W",
        "/stack/0/b",
        "/stack/1/W",
    ]
    assert [p for _, p in outer.namedparams()] == list(outer.params())
    assert outer.stack[1].W is dict(outer.namedparams())["/stack/1/W"]


def test_params_and_children_come_in_name_order():
    names = [f"p{i}" for i in range(12)][::-1]
    link = Chain()
    with link.init_scope():
        for name in names:
            setattr(link, name, Parameter(0.0, (1,)))
            setattr(link, "c" + name, Link())
    assert [path for path, _ in link.namedparams()] == ["/" + n for n in sorted(names)]
    assert [child.name for child in link.children()] == sorted("c" + n for n in names)


def test_params_can_skip_uninitialized():
    model = MLP()
    assert [path for path, _ in model.namedparams(include_uninit=False)] == [
        "/l1/b",
        "/l2/W",
        "/l2/b",
    ]
    assert len(list(model.params(include_uninit=False))) == 3
    assert len(list(model.params())) == 4


def test_links_namedlinks_and_children():
    model = MLP()
    stack = ChainList(model, Link())
    assert [path for path, _ in stack.namedlinks()] == ["/", "/0", "/0/l1", "/0/l2", "/1"]
    assert [link for _, link in stack.namedlinks()] == list(stack.links())
    assert list(stack.links(skipself=True))[0] is model
    assert [path for path, _ in model.namedlinks(skipself=True)] == ["/l1", "/l2"]
    assert list(model.children()) == [model.l1, model.l2]
    assert list(Link().children()) == []
    assert list(Link().links(skipself=True)) == []


def test_count_params_counts_initialized_and_warns_for_the_others():
    model = MLP(3, 2)
    with pytest.warns(UserWarning, match="'/l1/W' is not initialized"):
        assert model.count_params() == 3 + 2 * 3 + 2
    model(ones(5, 4))
    assert model.count_params() == 3 * 4 + 3 + 2 * 3 + 2


# -- calling ------------------------------------------------------------------------


def test_call_dispatches_to_forward_with_arguments():
    class Recorder(Link):
        def forward(self, *args, **kwargs):
            return args, kwargs

    assert Recorder()(1, 2, key=3) == ((1, 2), {"key": 3})


def test_base_forward_raises_naming_the_class():
    class Empty(Link):
        pass

    with pytest.raises(NotImplementedError, match="Empty.forward"):
        Empty()(1)


def test_lazy_initialization_on_first_call():
    model = MLP(3, 2)
    assert model.l1.W.array is None
    y = model(ones(5, 4))
    assert y.shape == (5, 2)
    assert model.l1.W.shape == (3, 4)
    assert model.l1.W.dtype == numpy.float32


# -- gradients ----------------------------------------------------------------------


def test_gradients_accumulate_until_cleargrads():
    link = Linear(4, 3)
    link.cleargrads()
    assert link.W.grad is None
    x = numpy.arange(8, dtype=numpy.float32).reshape(2, 4)
    loss_of(link, x).backward()
    expected_gW = numpy.tile(x.sum(axis=0), (3, 1))
    numpy.testing.assert_allclose(link.W.grad, expected_gW)
    numpy.testing.assert_allclose(link.b.grad, [2.0, 2.0, 2.0])
    loss_of(link, x).backward()
    numpy.testing.assert_allclose(link.W.grad, 2 * expected_gW)
    numpy.testing.assert_allclose(link.b.grad, [4.0, 4.0, 4.0])
    link.cleargrads()
    assert link.W.grad is None and link.b.grad is None


def test_zerograds_sets_zeros_also_for_lazy_parameters():
    model = MLP(3, 2)
    with pytest.warns(DeprecationWarning) as record:
        model.zerograds()
    messages = {str(w.message) for w in record}
    # The link warns, and so does each parameter's zerograd, as in Chainer.
    assert messages == {
        "Link.zerograds is deprecated. Use Link.cleargrads instead.",
        "Variable.zerograd is deprecated. Use Variable.cleargrad instead.",
    }
    numpy.testing.assert_array_equal(model.l2.W.grad, numpy.zeros((2, 3)))
    assert model.l1.W.grad is None
    model(ones(1, 4))
    numpy.testing.assert_array_equal(model.l1.W.grad, numpy.zeros((3, 4)))


def test_addgrads_adds_and_initializes_lazy_destination():
    src, dst = MLP(3, 2), MLP(3, 2)
    src.cleargrads()
    loss_of(src, ones(2, 4)).backward()
    dst.cleargrads()
    dst.addgrads(src)
    assert dst.l1.W.shape == (3, 4)
    numpy.testing.assert_array_equal(dst.l1.W.grad, src.l1.W.grad)
    assert dst.l1.W.grad is not src.l1.W.grad
    dst.addgrads(src)
    numpy.testing.assert_allclose(dst.l2.W.grad, 2 * src.l2.W.grad)
    numpy.testing.assert_allclose(dst.l1.b.grad, 2 * src.l1.b.grad)


def test_addgrads_on_chainlist_is_elementwise_by_position():
    src = ChainList(Linear(2, 2), Linear(2, 1))
    dst = ChainList(Linear(2, 2), Linear(2, 1))
    for link in (src, dst):
        link.cleargrads()
    src[1].b.grad = numpy.array([3.0], numpy.float32)
    dst.addgrads(src)
    numpy.testing.assert_array_equal(dst[1].b.grad, [3.0])
    assert dst[0].b.grad is None
    with pytest.raises(ValueError, match="addgrads: expected a source link with 2 child links"):
        dst.addgrads(ChainList(Linear(2, 2)))


# -- copyparams and copy ------------------------------------------------------------


def test_copyparams_copies_values_not_arrays_and_initializes_lazy_params():
    src, dst = MLP(3, 2), MLP(3, 2)
    src(ones(1, 4))
    dst.copyparams(src)
    for (path, p), (_, q) in zip(dst.namedparams(), src.namedparams()):
        numpy.testing.assert_array_equal(p.array, q.array, err_msg=path)
        assert p.array is not q.array
    src.l2.W.array[...] = 7
    assert not (dst.l2.W.array == 7).any()


def test_copyparams_initializes_lazy_source_to_match_destination():
    src, dst = MLP(3, 2), MLP(3, 2)
    dst(ones(1, 4))
    dst.copyparams(src)
    assert src.l1.W.shape == (3, 4)
    numpy.testing.assert_array_equal(dst.l1.W.array, src.l1.W.array)


def test_copyparams_copies_persistents_unless_told_not_to():
    src, dst = WithStats(), WithStats()
    src.mean[...] = [1.0, 2.0]
    src.N = 9
    mean = dst.mean
    dst.copyparams(src, copy_persistent=False)
    assert dst.N == 0 and not mean.any()
    dst.copyparams(src)
    assert dst.N == 9
    assert dst.mean is mean
    numpy.testing.assert_array_equal(mean, [1.0, 2.0])


def test_copy_share_shares_arrays_but_not_parameters_or_gradients():
    model = MLP(3, 2)
    model.name = "top"
    model(ones(1, 4))
    shared = model.copy()
    assert shared.name is None
    assert shared.l1.name == "l1"
    assert shared.l1 is not model.l1
    for (path, p), (_, q) in zip(shared.namedparams(), model.namedparams()):
        assert p is not q, path
        assert p.array is q.array, path
        assert p.grad is None, path
        assert p.name == q.name
    model.l1.W.array[...] = 0.5
    assert (shared.l1.W.array == 0.5).all()


def test_copy_share_sends_gradients_to_the_copy_only():
    model = Linear(4, 2)
    model.cleargrads()
    loss_of(model, ones(1, 4)).backward()
    model.cleargrads()
    shared = model.copy("share")
    loss_of(shared, ones(1, 4)).backward()
    numpy.testing.assert_array_equal(shared.W.grad, numpy.ones((2, 4)))
    assert model.W.grad is None


def test_copy_share_of_chainlist_and_registration_independence():
    stack = ChainList(Linear(2, 2), Linear(2, 1))
    shared = stack.copy("share")
    assert [c.name for c in shared] == ["0", "1"]
    assert shared[0] is not stack[0]
    assert shared[1].W.array is stack[1].W.array
    shared.append(Linear(1, 1))
    assert len(stack) == 2


def test_copy_copy_duplicates_values_into_new_arrays():
    model = MLP(3, 2)
    model(ones(1, 4))
    model.l2.b.array[...] = 5
    copied = model.copy("copy")
    for (path, p), (_, q) in zip(copied.namedparams(), model.namedparams()):
        numpy.testing.assert_array_equal(p.array, q.array, err_msg=path)
        assert p.array is not q.array
    model.l2.b.array[...] = 1
    numpy.testing.assert_array_equal(copied.l2.b.array, [5.0, 5.0])


def test_copy_init_reinitializes_initialized_params_and_keeps_lazy_ones_lazy():
    model = MLP(3, 2)
    model.l2.b.array[...] = 5
    fresh = model.copy("init")
    assert fresh.l1.W.array is None
    numpy.testing.assert_array_equal(fresh.l2.b.array, [0.0, 0.0])
    assert fresh.l2.W.shape == (2, 3)
    assert not numpy.array_equal(fresh.l2.W.array, model.l2.W.array)
    numpy.testing.assert_array_equal(model.l2.b.array, [5.0, 5.0])


def test_copy_rejects_unknown_mode():
    with pytest.raises(ValueError, match=r"MLP.copy: expected mode .* got 'deep'"):
        MLP().copy("deep")


def test_repeat_modes():
    block = Linear(2, 2)
    block.b.array[...] = 3
    inits = block.repeat(3)
    assert isinstance(inits, Sequential) and len(inits) == 3
    assert [b.name for b in inits] == ["0", "1", "2"]
    assert all(b is not block for b in inits)
    assert not numpy.array_equal(inits[0].W.array, inits[1].W.array)
    numpy.testing.assert_array_equal(inits[2].b.array, [0.0, 0.0])
    copies = block.repeat(2, mode="copy")
    numpy.testing.assert_array_equal(copies[1].W.array, block.W.array)
    assert copies[1].W.array is not block.W.array
    shares = block.repeat(2, mode="share")
    assert shares[0].W.array is block.W.array and shares[1].W.array is block.W.array
    assert len(block.repeat(0)) == 0
    with pytest.raises(ValueError, match="repeat: expected mode"):
        block.repeat(2, mode="clone")
    with pytest.raises(TypeError, match="repeat: expected n_repeat to be an int, got float"):
        block.repeat(2.0)


# -- serialization ------------------------------------------------------------------


def test_serialize_calls_serializer_with_chainer_paths_and_arrays():
    outer = Chain()
    with outer.init_scope():
        outer.net = MLP()
        outer.stack = ChainList(WithStats())
    serializer = RecordingSerializer()
    outer.serialize(serializer)
    assert [path for path, _ in serializer.log] == [
        "/net/l1/W",
        "/net/l1/b",
        "/net/l2/W",
        "/net/l2/b",
        "/stack/0/gamma",
        "/stack/0/N",
        "/stack/0/mean",
    ]
    values = dict(serializer.log)
    assert values["/net/l1/W"] is None
    assert values["/net/l2/W"] is outer.net.l2.W.array
    assert values["/stack/0/mean"] is outer.stack[0].mean


def test_deserialize_initializes_lazy_params_and_replaces_persistents():
    model = MLP(3, 2)
    loaded_W = numpy.arange(12, dtype=numpy.float64).reshape(3, 4)
    other = numpy.full((2, 3), 9.0, numpy.float32)
    before = model.l2.W.array.copy()
    model.serialize(RecordingSerializer(stored={"/l1/W": loaded_W, "/l2/W": other}))
    assert model.l1.W.shape == (3, 4)
    assert model.l1.W.dtype == numpy.float32
    assert model.l1.W.array is not loaded_W
    numpy.testing.assert_array_equal(model.l1.W.array, loaded_W)
    # An initialized parameter is the deserializer's to fill in place; the link keeps its array.
    numpy.testing.assert_array_equal(model.l2.W.array, before)

    stats = WithStats()
    new_mean = numpy.array([1.0, 2.0], numpy.float32)
    stats.serialize(RecordingSerializer(stored={"/N": 4, "/mean": new_mean}))
    assert stats.N == 4
    assert stats.mean is new_mean


# -- devices ------------------------------------------------------------------------


class _DeviceArray(numpy.ndarray):
    """A NumPy array standing for an array on the fake device."""


class _FakeDevice(backend.Device):
    xp = numpy
    name = "@fake"

    def send_array(self, array):
        return numpy.asarray(array).view(_DeviceArray)

    def is_array_supported(self, array):
        return isinstance(array, _DeviceArray)


@pytest.fixture
def fake_device(monkeypatch):
    device = _FakeDevice()
    monkeypatch.setattr(backend, "_device_resolvers", dict(backend._device_resolvers))
    backend.register_device_resolver("@fake", lambda spec: device)
    return device


def test_to_device_moves_params_grads_and_array_persistents(fake_device):
    outer = Chain()
    with outer.init_scope():
        outer.stats = WithStats()
        outer.stack = ChainList(MLP(3, 2))
    outer.cleargrads()
    outer.stats.gamma.grad = numpy.ones(2, numpy.float32)
    assert outer.to_device("@fake") is outer
    for link in outer.links():
        assert link.device is fake_device
        assert link.xp is numpy
    assert isinstance(outer.stats.gamma.array, _DeviceArray)
    assert isinstance(outer.stats.gamma.grad, _DeviceArray)
    assert isinstance(outer.stats.mean, _DeviceArray)
    assert outer.stats.N == 0
    assert isinstance(outer.stack[0].l2.W.array, _DeviceArray)
    assert outer.stack[0].l1.W.array is None


def test_add_param_places_new_parameters_on_the_link_device(fake_device):
    link = Link().to_device("@fake")
    link.add_param("W", (2,))
    assert isinstance(link.W.array, _DeviceArray)


def test_to_device_numpy_and_to_cpu():
    model = MLP(3, 2)
    W = model.l2.W.array
    assert model.to_device("@numpy") is model
    assert model.device == backend.cpu and model.l1.device == backend.cpu
    assert model.xp is numpy
    assert model.l2.W.array is W
    message = r"^MLP.to_cpu is deprecated; use to_device\('@numpy'\) instead"
    with pytest.warns(DeprecationWarning, match=message):
        assert model.to_cpu() is model


def test_to_gpu_delegates_to_to_device(monkeypatch):
    calls = []
    monkeypatch.setattr(Link, "to_device", lambda self, device: calls.append(device) or self)
    link = Link()
    with pytest.warns(DeprecationWarning, match=r"^Link.to_gpu is deprecated; use to_device"):
        assert link.to_gpu() is link
    with pytest.warns(DeprecationWarning) as caught:
        link.to_gpu(1)
    assert len(caught) == 1 and caught[0].filename == __file__
    assert calls == ["@cupy:0", "@cupy:1"]


def test_to_device_rejects_unknown_device():
    with pytest.raises(ValueError, match="unknown device specifier '@tpu:0'"):
        Link().to_device("@tpu:0")


# -- update rules -------------------------------------------------------------------


def test_enable_and_disable_update():
    model = MLP(3, 2)
    assert not model.update_enabled
    rules = [Rule(True), Rule(False)]
    model.l2.W.update_rule, model.l2.b.update_rule = rules
    assert model.update_enabled
    model.disable_update()
    assert [r.enabled for r in rules] == [False, False]
    assert not model.update_enabled
    model.enable_update()
    assert [r.enabled for r in rules] == [True, True]
    assert model.l1.b.update_rule is None


# -- ChainList ----------------------------------------------------------------------


def test_chainlist_list_interface_keeps_names_in_step():
    a, b, c, d = Linear(1, 1), Linear(1, 1), Linear(1, 1), Linear(1, 1)
    stack = ChainList(a, b)
    stack.add_link(c)
    assert len(stack) == 3 and list(stack) == [a, b, c]
    assert stack[-1] is c
    assert stack[1:] == [b, c]
    stack.insert(0, d)
    assert [link.name for link in stack] == ["0", "1", "2", "3"]
    assert d.name == "0" and c.name == "3"
    del stack[0]
    assert list(stack) == [a, b, c] and c.name == "2"
    stack[1] = d
    assert list(stack) == [a, d, c] and d.name == "1"
    stack[0:2] = [b]
    assert list(stack) == [b, c] and c.name == "1"
    assert stack.pop() is c
    stack.reverse()
    assert list(stack) == [b]
    stack.remove(b)
    assert len(stack) == 0
    assert stack.namedparams is not None and list(stack.params()) == []


def test_chainlist_rejects_non_links():
    stack = ChainList()
    with pytest.raises(TypeError, match="ChainList.insert: expected a Link, got int"):
        stack.append(3)
    with pytest.raises(TypeError, match="ChainList.insert: expected a Link, got function"):
        ChainList(lambda x: x)
    stack.append(Link())
    with pytest.raises(TypeError, match="__setitem__: expected a Link, got str"):
        stack[0] = "x"
    with pytest.raises(TypeError, match="cannot register link 'l'.*append"), stack.init_scope():
        stack.l = Link()
    with stack.init_scope():
        stack.p = Parameter(0.0, (1,))
    assert [path for path, _ in stack.namedparams()] == ["/p"]


def test_chainlist_copyparams_by_position():
    src = ChainList(Linear(2, 2), Linear(2, 1))
    dst = ChainList(Linear(2, 2), Linear(2, 1))
    dst.copyparams(src)
    numpy.testing.assert_array_equal(dst[1].W.array, src[1].W.array)
    with pytest.raises(ValueError, match="copyparams: expected a source link with 2 child"):
        dst.copyparams(ChainList())


# -- printing -----------------------------------------------------------------------


def test_str_of_link_chain_and_chainlist():
    assert str(Linear(3)) == "Linear(in_size=None, out_size=3, nobias=False)"
    assert str(Link()) == "Link()"
    assert str(Chain()) == "Chain()"
    assert str(ChainList()) == "ChainList()"
    outer = Chain()
    with outer.init_scope():
        outer.net = MLP(3, 2)
        outer.stack = ChainList(Linear(2, 1, nobias=True))
    expected = (
        "Chain(\n"
        "  (net): MLP(\n"
        "    (l1): Linear(in_size=None, out_size=3, nobias=False),\n"
        "    (l2): Linear(in_size=3, out_size=2, nobias=False),\n"
        "  ),\n"
        "  (stack): ChainList(\n"
        "    (0): Linear(in_size=2, out_size=1, nobias=True),\n"
        "  ),\n"
        ")"
    )
    assert str(outer) == expected
    assert repr(outer) == expected


def test_variables_are_not_registered_as_params():
    link = Link()
    with link.init_scope():
        link.v = Variable(ones(2))
    assert list(link.params()) == []


class _NoInit(Link):
    def __init__(self):
        pass

    def forward(self, x):
        return x


def test_a_subclass_that_never_calls_link_init_is_named_when_used():
    with pytest.raises(RuntimeError, match=r"^Link\.__init__\(\) has not been called\.$"):
        _NoInit()(numpy.ones(2, numpy.float32))

    class ScopeWithoutInit(Link):
        def __init__(self):
            with self.init_scope():
                pass

    with pytest.raises(RuntimeError, match=r"Link\.__init__\(\) has not been called"):
        ScopeWithoutInit()

    class ParamWithoutInit(Link):
        def __init__(self):
            self.add_param("p", (2, 3))

    with pytest.raises(RuntimeError, match=r"Link\.__init__\(\) has not been called"):
        ParamWithoutInit()


def test_a_link_without_forward_is_called_through_a_mixins_call():
    class CallMixin:
        def __call__(self, x, scale=1):
            return x * scale

    class Injected(Link, CallMixin):
        pass

    assert Injected()(3, scale=2) == 6


def test_a_link_without_forward_or_call_raises_both_error_types():
    with pytest.raises(NotImplementedError, match="implements neither forward nor __call__"):
        Link()(0)
    with pytest.raises(AttributeError):
        Link()(0)


def test_a_mixins_call_that_is_no_function_is_called_without_the_link():
    calls = []

    class Recorder:
        def __call__(self, *args, **kwargs):
            calls.append((args, kwargs))
            return 3

    class CallMixin:
        __call__ = Recorder()  # not a descriptor: called as found, as Chainer's super() does

    class Injected(Link, CallMixin):
        pass

    assert Injected()(1, a=2) == 3
    assert calls == [((1,), {"a": 2})]
