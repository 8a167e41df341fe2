"""Chainer's test marks, which dbr.chainer.testing.attr and inject_backend_tests apply."""

CHAINER_MARKERS = ("chainerx", "cudnn", "ideep", "multi_gpu", "slow", "theano")


def pytest_configure(config):
    for name in CHAINER_MARKERS:
        config.addinivalue_line("markers", f"{name}: Chainer's {name} test mark")
