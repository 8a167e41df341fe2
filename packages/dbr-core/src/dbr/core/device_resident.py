"""DeviceResident: the base of objects that live on one device and move with ``to_device``.

:class:`~dbr.core.Link` is one (it moves its parameters, persistent arrays and
children with its own :meth:`~dbr.core.Link.to_device`); other objects that
hold arrays (a sampler's tables, a tree's codes) derive from
:class:`DeviceResident` and say which arrays they hold by overriding
:meth:`DeviceResident.device_resident_accept`, as in Chainer v7::

    class Table(DeviceResident):
        def __init__(self, values):
            super().__init__()
            self.values = values

        def device_resident_accept(self, visitor):
            super().device_resident_accept(visitor)
            self.values = visitor.visit_array(self.values)
"""

import warnings

from dbr.core import backend

__all__ = ["DeviceResident", "DeviceResidentsVisitor"]


class DeviceResident:
    """An object that lives on one device (``'@numpy'`` until moved) and moves as a whole.

    ``to_device`` makes a visitor for the target device and hands it to
    :meth:`device_resident_accept`, which records the new device and sends
    every array and Variable the object declares there.
    """

    _device = backend.cpu

    def device_resident_accept(self, visitor):
        """Show this object to ``visitor``; override to also show the arrays it holds.

        An override calls ``super().device_resident_accept(visitor)``, then
        replaces each array attribute by ``visitor.visit_array(array)`` and
        passes each Variable to ``visitor.visit_variable(variable)``.

        Args:
            visitor (DeviceResidentsVisitor): the visitor.
        """
        visitor.visit_device_resident(self)

    @property
    def device(self):
        """The :class:`~dbr.core.backend.Device` this object lives on."""
        return self._device

    @property
    def xp(self):
        """The array module (numpy or cupy) of :attr:`device`."""
        return self._device.xp

    def to_device(self, device):
        """Move this object and the arrays it declares to ``device``; returns this object.

        Args:
            device: a device specifier (``'@numpy'``, ``'@cupy:0'``, a Device, ...).
        """
        self.device_resident_accept(_ToDeviceVisitor(backend.get_device(device)))
        return self

    def to_cpu(self):
        """Move to the CPU; deprecated as in Chainer v7 (DeprecationWarning): use to_device."""
        _warn_deprecated(self, "to_cpu", "@numpy")
        return self.to_device(backend.cpu)

    def to_gpu(self, device=None):
        """Move to GPU ``device`` (an id; GPU 0 if None); deprecated: use ``to_device``."""
        _warn_deprecated(self, "to_gpu", "@cupy:N")
        device_id = 0 if device is None else int(getattr(device, "id", device))
        return self.to_device(f"@cupy:{device_id}")


def _warn_deprecated(resident, method, device):
    warnings.warn(
        f"{type(resident).__name__}.{method} is deprecated; use to_device({device!r}) instead",
        DeprecationWarning,
        stacklevel=3,
    )


class DeviceResidentsVisitor:
    """Visits :class:`DeviceResident` objects and the arrays and Variables they hold.

    Subclasses implement the three ``visit_*`` methods; the base ones raise
    NotImplementedError.
    """

    def visit_device_resident(self, device_resident):
        """Process a :class:`DeviceResident` (called by its ``device_resident_accept``)."""
        raise NotImplementedError(
            f"{type(self).__name__}.visit_device_resident is not implemented"
        )

    def visit_array(self, arr):
        """Process an array and return the array to keep (``arr`` itself or a new one)."""
        raise NotImplementedError(f"{type(self).__name__}.visit_array is not implemented")

    def visit_variable(self, param):
        """Process a :class:`~dbr.core.Variable` or :class:`~dbr.core.Parameter` in place."""
        raise NotImplementedError(f"{type(self).__name__}.visit_variable is not implemented")


class _ToDeviceVisitor(DeviceResidentsVisitor):
    """Moves what it visits to one device."""

    def __init__(self, device):
        self._device = device

    def visit_device_resident(self, device_resident):
        device_resident._device = self._device

    def visit_array(self, arr):
        return self._device.send(arr)

    def visit_variable(self, param):
        param.to_device(self._device)
