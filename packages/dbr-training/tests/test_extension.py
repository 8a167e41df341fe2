import pytest

from dbr.training.extension import (
    PRIORITY_EDITOR,
    PRIORITY_READER,
    PRIORITY_WRITER,
    Extension,
    make_extension,
)


def test_priorities_are_chainers_values():
    assert (PRIORITY_WRITER, PRIORITY_EDITOR, PRIORITY_READER) == (300, 200, 100)


def test_extension_defaults():
    class MyExtension(Extension):
        def __call__(self, trainer):
            pass

    ext = MyExtension()
    assert ext.trigger == (1, "iteration")
    assert ext.priority == PRIORITY_READER
    assert ext.name is None
    assert ext.default_name == "MyExtension"
    assert ext.initialize(None) is None
    assert ext.finalize() is None
    assert ext.on_error(None, ValueError(), None) is None
    assert ext.serialize(None) is None


def test_extension_call_not_implemented():
    with pytest.raises(NotImplementedError, match="Extension must implement __call__"):
        Extension()(None)


def _fin():
    pass


def _init(trainer):
    pass


def _err(trainer, exc, tb):
    pass


_DEFAULTS = {"trigger": (1, "iteration"), "default_name": "my_ext", "priority": PRIORITY_READER}
_NAMED = {"trigger": (2, "epoch"), "default_name": "named", "priority": PRIORITY_WRITER}
_HOOKS = {"finalizer": _fin, "initializer": _init, "on_error": _err}


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        pytest.param(
            {},
            {**_DEFAULTS, "finalize": None, "initialize": None, "on_error": None},
            id="defaults",
        ),
        pytest.param(
            {**_NAMED, **_HOOKS},
            {**_NAMED, "finalize": _fin, "initialize": _init, "on_error": _err},
            id="given",
        ),
    ],
)
def test_make_extension_sets_attributes(kwargs, expected):
    @make_extension(**kwargs)
    def my_ext(trainer):
        return 42

    assert my_ext(None) == 42
    assert {name: getattr(my_ext, name) for name in expected} == expected


def test_make_extension_rejects_invoke_before_training():
    with pytest.raises(ValueError, match="invoke_before_training was removed"):
        make_extension(invoke_before_training=True)


def test_make_extension_rejects_unknown_keyword():
    with pytest.raises(TypeError, match="unexpected keyword argument.*colour"):
        make_extension(colour="red")


def test_make_extension_rejects_non_callable():
    with pytest.raises(TypeError, match="expected a callable to decorate, got int"):
        make_extension()(3)
