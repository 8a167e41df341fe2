"""``chainer.cuda``: the same module as :mod:`dbr.chainer.backends.cuda`, as in Chainer."""

import sys

from dbr.chainer.backends import cuda as _cuda

# Importing this name gives the module already there, so that
# ``dbr.chainer.cuda is dbr.chainer.backends.cuda`` as ``chainer.cuda`` is in Chainer.
sys.modules[__name__] = _cuda
