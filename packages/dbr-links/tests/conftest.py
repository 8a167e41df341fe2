"""NumPy's global generator seeded per test, for every test of dbr-links.

The checks that link tests share are dbr.core.testing's: LinkTestCase and
the functions of :mod:`dbr.core.testing.link_checks`.
"""

from dbr.core.testing.seeding import numpy_seeded_per_test  # noqa: F401
