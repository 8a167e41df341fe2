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


def test_make_extension_sets_attributes():
    def fin():
        pass

    def init(trainer):
        pass

    def err(trainer, exc, tb):
        pass

    @make_extension(
        trigger=(2, "epoch"),
        default_name="named",
        priority=PRIORITY_WRITER,
        finalizer=fin,
        initializer=init,
        on_error=err,
    )
    def ext(trainer):
        return 42

    assert ext(None) == 42
    assert ext.trigger == (2, "epoch")
    assert ext.default_name == "named"
    assert ext.priority == PRIORITY_WRITER
    assert ext.finalize is fin
    assert ext.initialize is init
    assert ext.on_error is err


def test_make_extension_defaults():
    @make_extension()
    def my_ext(trainer):
        pass

    assert my_ext.trigger == (1, "iteration")
    assert my_ext.default_name == "my_ext"
    assert my_ext.priority == PRIORITY_READER
    assert my_ext.finalize is None
    assert my_ext.initialize is None
    assert my_ext.on_error is None


def test_make_extension_rejects_invoke_before_training():
    with pytest.raises(ValueError, match="invoke_before_training was removed"):
        make_extension(invoke_before_training=True)


def test_make_extension_rejects_unknown_keyword():
    with pytest.raises(TypeError, match="unexpected keyword argument.*colour"):
        make_extension(colour="red")


def test_make_extension_rejects_non_callable():
    with pytest.raises(TypeError, match="expected a callable to decorate, got int"):
        make_extension()(3)
