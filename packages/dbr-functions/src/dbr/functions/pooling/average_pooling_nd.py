"""average_pooling_nd, average_pooling_1d, average_pooling_3d: the mean over sliding windows."""

from dbr.functions.pooling._pooling import Windows, WindowSum, spatial_ndim


class AveragePoolingND(WindowSum):
    """The mean of each window of ``x`` (windows never cover all: ``cover_all`` is False).

    Args:
        ndim (int): the number of spatial axes.
        ksize, stride, pad, pad_value: as :func:`average_pooling_nd` takes them.
        label (str): the function's name in type-check messages.
        who (str): the function named in errors about the options.
    """

    def __init__(
        self,
        ndim,
        ksize,
        stride=None,
        pad=0,
        pad_value=0,
        label="AveragePoolingND",
        who="average_pooling_nd",
    ):
        windows = Windows(ndim, ksize, stride, pad, False, who)
        if pad_value is not None and (isinstance(pad_value, bool) or pad_value != 0):
            raise ValueError(f"{who}: pad_value must be 0 or None, got {pad_value!r}")
        if pad_value is None and any(p >= k for p, k in zip(windows.pad, windows.ksize)):
            raise ValueError(
                f"{who}: with pad_value=None, pad must be smaller than ksize on every axis "
                f"(so that no window lies wholly in the padding), got pad={windows.pad}, "
                f"ksize={windows.ksize}"
            )
        super().__init__(windows, 1.0 / windows.size)
        self.pad_value = pad_value
        self._label = label

    @property
    def label(self):
        """The function's name in messages."""
        return self._label

    def check_type_forward(self, in_types):
        self.windows.check_input(in_types)

    def coefficients(self, in_size, xp, dtype):
        """``1 / K``, or with ``pad_value=None`` one over each window's count of inputs."""
        if self.pad_value is not None or not any(self.windows.pad):
            return 1.0 / self.windows.size
        w = self.windows
        counts = None
        for i, out in enumerate(w.out_size(in_size)):
            starts = xp.arange(out) * w.stride[i] - w.pad[i]
            stops = xp.minimum(starts + w.ksize[i], in_size[i])
            count = (stops - xp.maximum(starts, 0)).astype(dtype)
            counts = count if counts is None else counts[..., None] * count
        return 1 / counts


def apply_average_pooling(x, ndim, ksize, stride, pad, pad_value, label, who):
    """Apply :class:`AveragePoolingND` and return its output Variable."""
    return AveragePoolingND(ndim, ksize, stride, pad, pad_value, label, who).apply((x,))[0]


def average_pooling_nd(x, ksize, stride=None, pad=0, pad_value=0):
    """N-dimensional spatial average pooling.

    For input ``x`` of shape ``(n, c, d_1, ..., d_N)``, each output element
    is the mean of one window of ``K = k_1 x ... x k_N`` elements of a
    channel; windows start every ``s_i`` elements of the input padded with
    ``p_i`` elements on both sides. Windows never run past the padded input
    (there is no ``cover_all`` mode).

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d_1, ..., d_N)``, ``N >= 1``.
        ksize (int or tuple of ints): window size; ``k`` means ``(k, ..., k)``.
            A tuple gives the number of spatial axes.
        stride (int, tuple of ints or None): window stride; None means ``ksize``.
        pad (int or tuple of ints): padding on both sides of each spatial axis.
        pad_value (0 or None): 0 counts padded elements as zeros (the sum of
            each window is divided by ``K``, biasing border windows towards
            zero); None leaves them out (the sum is divided by the number of
            input elements in the window; ``pad`` must then be smaller than
            ``ksize``).

    Returns:
        Variable: of shape ``(n, c, o_1, ..., o_N)`` with
        ``o_i = (d_i + 2 p_i - k_i) // s_i + 1``, and ``x``'s dtype (float16
        sums are accumulated in float32).

    >>> import numpy as np
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> average_pooling_nd(x, 2).array
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]], dtype=float32)
    """
    ndim = spatial_ndim(x, ksize)
    return apply_average_pooling(
        x, ndim, ksize, stride, pad, pad_value, "AveragePoolingND", "average_pooling_nd"
    )


def average_pooling_1d(x, ksize, stride=None, pad=0, pad_value=0):
    """1-dimensional spatial average pooling: :func:`average_pooling_nd` on ``(n, c, d)``.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d)``.
        ksize (int or tuple of one int): window size.
        stride (int, tuple of one int or None): window stride; None means ``ksize``.
        pad (int or tuple of one int): padding on both sides.
        pad_value (0 or None): as for :func:`average_pooling_nd`.

    Returns:
        Variable: of shape ``(n, c, (d + 2 p - k) // s + 1)`` and ``x``'s dtype.

    >>> import numpy as np
    >>> average_pooling_1d(np.array([[[1, 3, 2, 6]]], np.float32), 2).array
    array([[[2., 4.]]], dtype=float32)
    """
    return apply_average_pooling(
        x, 1, ksize, stride, pad, pad_value, "AveragePooling1D", "average_pooling_1d"
    )


def average_pooling_3d(x, ksize, stride=None, pad=0, pad_value=0):
    """3-dimensional spatial average pooling: :func:`average_pooling_nd` on 5-d inputs.

    Args:
        x (Variable or array): float16, float32 or float64 input of shape
            ``(n, c, d_1, d_2, d_3)``.
        ksize (int or tuple of 3 ints): window size.
        stride (int, tuple of 3 ints or None): window stride; None means ``ksize``.
        pad (int or tuple of 3 ints): padding on both sides.
        pad_value (0 or None): as for :func:`average_pooling_nd`.

    Returns:
        Variable: of shape ``(n, c, o_1, o_2, o_3)`` and ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2)
    >>> average_pooling_3d(x, 2).array
    array([[[[[3.5]]]]], dtype=float32)
    """
    return apply_average_pooling(
        x, 3, ksize, stride, pad, pad_value, "AveragePooling3D", "average_pooling_3d"
    )
