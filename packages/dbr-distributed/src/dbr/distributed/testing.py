"""Helpers for tests of multi-process code (ChainerMN's ``chainermn.testing``)."""

from dbr.core import get_device as _get_device

__all__ = ["get_device"]


def get_device(device_id=None, use_chainerx=False):
    """The device a test of this rank runs on: ``'@numpy'``, or ``'@cupy:<device_id>'``.

    Args:
        device_id (int or None): the GPU of this rank (``comm.intra_rank`` is
            the usual choice); None for the CPU.
        use_chainerx (bool): ChainerX's device instead; dbr has no ChainerX,
            so True raises.

    Returns:
        Device: the device (a CuPy device needs ``dbr-distributed[gpu]``).
    """
    if use_chainerx:
        raise ValueError(
            "get_device: use_chainerx=True asks for a ChainerX device, which dbr does not "
            "have; expected use_chainerx=False"
        )
    return _get_device("@numpy" if device_id is None else f"@cupy:{int(device_id)}")
