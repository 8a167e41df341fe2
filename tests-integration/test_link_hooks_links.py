"""dbr.core's link hooks on dbr.links' layers, against Chainer 7.8.1.

The reference values are fixtures/link_hooks_links.npz, made by fixtures/make_link_hooks_links.py.
"""

import os

import numpy
import pytest

import dbr.links as L
from dbr.core import LinkHook, Parameter, Variable, using_config
from dbr.core.link_hooks import SpectralNormalization, WeightStandardization

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "link_hooks_links.npz")
LINKS = {
    "linear": lambda: L.Linear(4, 3),
    "conv": lambda: L.Convolution2D(2, 3, ksize=2),
    "deconv": lambda: L.Deconvolution2D(2, 3, ksize=2),
}
HOOKS = {"sn": SpectralNormalization, "ws": WeightStandardization}


class Recorder(LinkHook):
    name = "Recorder"

    def forward_preprocess(self, args):
        self.weight = args.link.W.array.copy()


@pytest.fixture(scope="module")
def chainer_results():
    with numpy.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("hook_name", sorted(HOOKS))
@pytest.mark.parametrize("link_name", sorted(LINKS))
def test_weight_hooks_on_links_match_chainer(chainer_results, hook_name, link_name):
    prefix = f"{hook_name}_{link_name}/"
    ref = {k[len(prefix) :]: v for k, v in chainer_results.items() if k.startswith(prefix)}
    with using_config("dtype", numpy.float64):
        link = LINKS[link_name]()
    link.W.array[...] = ref["W"]
    link.b.array[...] = ref["b"]
    link.add_hook(HOOKS[hook_name]())
    recorder = Recorder()
    link.add_hook(recorder)
    if hook_name == "sn":
        # Deconvolution2D's W is (in, out, kh, kw): u runs over its output axis, 1.
        assert link.W_u.shape == ref["u"].shape == (3,)
        link.W_u = ref["u"].copy()
    x = Variable(ref["x"])
    y = link(x)
    link.cleargrads()
    y.grad = ref["gy"]
    y.backward()
    numpy.testing.assert_allclose(recorder.weight, ref["W_bar"], rtol=1e-9, atol=1e-12)
    numpy.testing.assert_allclose(y.array, ref["y"], rtol=1e-9, atol=1e-12)
    numpy.testing.assert_allclose(x.grad, ref["gx"], rtol=1e-9, atol=1e-12)
    numpy.testing.assert_allclose(link.W.grad, ref["gW"], rtol=1e-8, atol=1e-10)
    numpy.testing.assert_allclose(link.b.grad, ref["gb"], rtol=1e-9, atol=1e-12)
    if hook_name == "sn":
        numpy.testing.assert_allclose(link.W_u, ref["u_after"], rtol=1e-12)
    assert type(link.W) is Parameter
