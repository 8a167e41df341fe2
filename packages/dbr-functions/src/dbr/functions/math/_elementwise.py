"""The base node of the elementwise functions of one floating input that apply one ufunc."""

from dbr.core import FunctionNode, backend, type_check
from dbr.core.utils import force_array


def check_float_input(in_types):
    """Expect exactly one input, named ``x``, of a floating dtype."""
    type_check.argname(in_types, ("x",))
    type_check.expect(in_types[0].dtype.kind == "f")


class UnaryElementwise(FunctionNode):
    """Elementwise ``y = xp.<ufunc>(x)`` of one floating input ``x``.

    A subclass sets ``ufunc`` (the name of the NumPy/CuPy ufunc), sets
    ``retains_output`` when its backward reads ``y`` rather than ``x``, and
    writes its own ``backward``.
    """

    ufunc = None
    retains_output = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Chosen once per class so that forward, a hot path, does not branch on it.
        cls._retain = (
            FunctionNode.retain_outputs if cls.retains_output else FunctionNode.retain_inputs
        )

    def check_type_forward(self, in_types):
        check_float_input(in_types)

    def forward(self, inputs):
        self._retain((0,))
        x = inputs[0]
        return (force_array(getattr(backend.get_array_module(x), self.ufunc)(x)),)
