"""pytest for the testing helpers that build tests, with one message when it is missing."""


def require_pytest():
    """Return the ``pytest`` module, or raise an ImportError that names the extra to install.

    pytest is only in dbr-core's ``[testing]`` extra; the helpers that need it
    (FunctionTestCase, LinkTestCase, bad_input_test, DEVICES, the seeding
    fixture) import it through here when they are imported.
    """
    try:
        import pytest
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "dbr.core.testing's test helpers (FunctionTestCase, LinkTestCase, "
            "bad_input_test, DEVICES, seeding) need pytest: pip install 'dbr-core[testing]'"
        ) from e
    return pytest
