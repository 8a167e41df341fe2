"""Check a ``pip install --find-links dist dbr-chainer``: every dbr-* at the expected version.

Run by ``nox -s install-from-dist`` in the virtualenv it installed into, from a
folder outside the source tree, with ``{distribution: version}`` as JSON: the
installed dbr distributions must be exactly those, and a backward through
``dbr.chainer`` must give the right gradient.
"""

import importlib.metadata as metadata
import json
import sys

import numpy

import dbr.chainer as chainer
import dbr.chainer.functions as F


def main(expected: dict[str, str]) -> None:
    """Raise AssertionError unless the installed dbr-* are ``expected`` and a backward works."""
    installed = {
        d.metadata["Name"]: d.version
        for d in metadata.distributions()
        if d.metadata["Name"].startswith("dbr-")
    }
    assert installed == expected, installed
    x = chainer.Variable(numpy.array([-1.0, 2.0], dtype=numpy.float32))
    F.sum(F.relu(x)).backward()
    assert x.grad.tolist() == [0.0, 1.0], x.grad
    print("installed from dist/:", ", ".join(f"{k} {v}" for k, v in sorted(installed.items())))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
