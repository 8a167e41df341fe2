"""``distribution_unittest``: a TestCase base comparing a distribution with SciPy's."""

import math
import unittest

import numpy

from dbr.chainer.testing import array, attr

__all__ = ["distribution_unittest"]

_TARGETS = (
    "batch_shape", "cdf", "entropy", "event_shape", "icdf", "log_cdf", "log_prob",
    "log_survival", "mean", "prob", "sample", "stddev", "support", "survival", "variance",
)  # fmt: skip


def _to_gpu(x):
    from dbr.core import backend

    return backend.to_device(backend.get_device("@cupy:0"), x)


def _size(shape):
    return math.prod(shape)


class distribution_unittest(unittest.TestCase):  # noqa: N801 - Chainer's name
    """Base of a distribution's tests against ``scipy.stats``.

    A subclass defines ``setUp_configure`` setting ``dist`` (the distribution
    class), ``scipy_dist``, ``params`` (its constructor arguments, NumPy
    arrays), ``scipy_params``, ``test_targets`` (a set of names among
    ``batch_shape cdf entropy event_shape icdf log_cdf log_prob log_survival
    mean prob sample stddev support survival variance``) and optionally
    ``support``, ``event_shape``, ``continuous``, ``options``; and
    ``sample_for_test()``. The class must have ``shape``, ``sample_shape``
    and ``is_variable`` attributes (usually from ``parameterize``). Each target
    gets ``test_<target>_cpu`` and ``test_<target>_gpu`` (marked ``gpu``);
    the others skip. ``scipy_onebyone = True`` calls SciPy once per batch
    element, for distributions whose SciPy version does not broadcast.
    """

    scipy_onebyone = False

    def setUp(self):
        self.support = "real"
        if not hasattr(self, "event_shape"):
            self.event_shape = ()
        self.continuous = True
        self.test_targets = set()
        self.options = {}
        self.setUp_configure()
        unknown = self.test_targets - set(_TARGETS)
        if unknown:
            raise ValueError(f"invalid target(s): {unknown}")
        if self.is_variable:
            from dbr.core.variable import Variable

            self.params = {k: Variable(v) for k, v in self.params.items()}

    def setUp_configure(self):  # noqa: N802 - Chainer's name
        """Set the distribution, SciPy's, their parameters and the test targets."""
        raise NotImplementedError("setUp_configure is not implemented.")

    def scipy_onebyone_params_iter(self):
        """SciPy's parameters for each batch element in turn."""
        for index in numpy.ndindex(self.shape):
            yield {k: v[index] for k, v in self.scipy_params.items()}

    @property
    def cpu_dist(self):
        """The distribution built from ``params`` (and ``options``) on the CPU."""
        params = self.params
        params.update(self.options)
        return self.dist(**params)

    @property
    def gpu_dist(self):
        """The distribution built from ``params`` moved to the GPU."""
        from dbr.core.variable import Variable

        if self.is_variable:
            params = {k: Variable(_to_gpu(v.array)) for k, v in self.params.items()}
        else:
            params = {k: _to_gpu(v) for k, v in self.params.items()}
        params.update(self.options)
        return self.dist(**params)

    def _dist(self, is_gpu):
        return self.gpu_dist if is_gpu else self.cpu_dist

    def _sample(self, is_gpu):
        smp = self.sample_for_test()
        return smp, (_to_gpu(smp) if is_gpu else smp)

    def _onebyone(self, method, extra_shape=()):
        values = [method(**p) for p in self.scipy_onebyone_params_iter()]
        return numpy.vstack(values).reshape(self.shape + extra_shape)

    def _check_function(self, is_gpu, ours, scipy_name):
        smp, arg = self._sample(is_gpu)
        actual = getattr(self._dist(is_gpu), ours)(arg).array
        array.assert_allclose(
            actual, getattr(self.scipy_dist, scipy_name)(smp, **self.scipy_params)
        )

    def _check_moment(self, is_gpu, ours, scipy_name, onebyone_shape=None):
        actual = getattr(self._dist(is_gpu), ours).array
        method = getattr(self.scipy_dist, scipy_name)
        if self.scipy_onebyone and onebyone_shape is not None:
            expected = self._onebyone(method, onebyone_shape)
        else:
            expected = method(**self.scipy_params)
        array.assert_allclose(actual, expected)

    def check_batch_shape(self, is_gpu):
        """``batch_shape`` is ``shape``."""
        self.assertEqual(self._dist(is_gpu).batch_shape, self.shape)

    def check_event_shape(self, is_gpu):
        """``event_shape`` is the configured one."""
        self.assertEqual(self._dist(is_gpu).event_shape, self.event_shape)

    def check_support(self, is_gpu):
        """``support`` is the configured one."""
        self.assertEqual(self._dist(is_gpu).support, self.support)

    def check_cdf(self, is_gpu):
        """``cdf`` against SciPy's ``cdf``."""
        self._check_function(is_gpu, "cdf", "cdf")

    def check_log_cdf(self, is_gpu):
        """``log_cdf`` against SciPy's ``logcdf``."""
        self._check_function(is_gpu, "log_cdf", "logcdf")

    def check_survival(self, is_gpu):
        """``survival_function`` against SciPy's ``sf``."""
        self._check_function(is_gpu, "survival_function", "sf")

    def check_log_survival(self, is_gpu):
        """``log_survival_function`` against SciPy's ``logsf``."""
        self._check_function(is_gpu, "log_survival_function", "logsf")

    def check_prob(self, is_gpu):
        """``prob`` against SciPy's ``pdf`` (``pmf`` when not continuous)."""
        self._check_function(is_gpu, "prob", "pdf" if self.continuous else "pmf")

    def check_icdf(self, is_gpu):
        """``icdf`` against SciPy's ``ppf`` on uniform samples."""
        shape = self.sample_shape + self.shape
        smp = numpy.random.uniform(1e-5, 1 - 1e-5, shape).astype(numpy.float32)
        actual = self._dist(is_gpu).icdf(_to_gpu(smp) if is_gpu else smp).array
        array.assert_allclose(actual, self.scipy_dist.ppf(smp, **self.scipy_params))

    def check_entropy(self, is_gpu):
        """``entropy`` against SciPy's."""
        self._check_moment(is_gpu, "entropy", "entropy", ())

    def check_mean(self, is_gpu):
        """``mean`` against SciPy's."""
        self._check_moment(is_gpu, "mean", "mean", self.cpu_dist.event_shape)

    def check_variance(self, is_gpu):
        """``variance`` against SciPy's ``var``."""
        self._check_moment(is_gpu, "variance", "var", self.cpu_dist.event_shape)

    def check_stddev(self, is_gpu):
        """``stddev`` against SciPy's ``std``."""
        self._check_moment(is_gpu, "stddev", "std")

    def check_log_prob(self, is_gpu):
        """``log_prob`` against SciPy's ``logpdf`` (``logpmf`` when not continuous)."""
        smp, arg = self._sample(is_gpu)
        actual = self._dist(is_gpu).log_prob(arg).array
        scipy_prob = self.scipy_dist.logpdf if self.continuous else self.scipy_dist.logpmf
        if not self.scipy_onebyone:
            array.assert_allclose(actual, scipy_prob(smp, **self.scipy_params))
            return
        n_sample, n_batch = _size(self.sample_shape), _size(self.shape)
        per_element = numpy.swapaxes(smp.reshape(n_sample, n_batch, _size(self.event_shape)), 0, 1)
        per_element = per_element.reshape((-1,) + self.sample_shape + self.event_shape)
        values = [
            scipy_prob(s, **p) for p, s in zip(self.scipy_onebyone_params_iter(), per_element)
        ]
        expected = numpy.vstack(values).reshape(n_batch, -1).T
        array.assert_allclose(actual, expected.reshape(self.sample_shape + self.shape))

    def check_sample(self, is_gpu):
        """Mean and standard deviation of 100000 samples against SciPy's ``rvs``."""
        n = 100000
        dist = self._dist(is_gpu)
        ours = dist.sample(sample_shape=(n,) + self.sample_shape).array
        event_shape = self.cpu_dist.event_shape
        if self.scipy_onebyone:
            theirs = numpy.vstack(
                [
                    self.scipy_dist.rvs(size=(n,) + self.sample_shape, **p)
                    for p in self.scipy_onebyone_params_iter()
                ]
            )
            theirs = theirs.reshape((_size(self.shape), n) + self.sample_shape + event_shape)
            theirs = numpy.rollaxis(theirs, 0, theirs.ndim - len(event_shape))
            theirs = theirs.reshape((n,) + self.sample_shape + self.shape + event_shape)
        else:
            theirs = self.scipy_dist.rvs(
                size=(n,) + self.sample_shape + self.shape, **self.scipy_params
            )
        array.assert_allclose(ours.mean(axis=0), theirs.mean(axis=0), atol=3e-2, rtol=3e-2)
        array.assert_allclose(ours.std(axis=0), theirs.std(axis=0), atol=3e-2, rtol=3e-2)


def _make_test(target, is_gpu):
    def test(self):
        if target not in self.test_targets:
            self.skipTest(f"'{target}' does not exist in test_targets.")
        getattr(self, f"check_{target}")(is_gpu)

    test.__name__ = test.__qualname__ = f"test_{target}_{'gpu' if is_gpu else 'cpu'}"
    test.__doc__ = (
        f"Check {target} on the {'GPU' if is_gpu else 'CPU'} (skipped unless a test target)."
    )
    return attr.gpu(test) if is_gpu else test


for _target in _TARGETS:
    for _is_gpu in (False, True):
        _test = _make_test(_target, _is_gpu)
        setattr(distribution_unittest, _test.__name__, _test)
del _target, _is_gpu, _test
