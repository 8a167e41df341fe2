"""The UCI handwritten digits (8x8, 1,797 images) that scikit-learn ships: no download."""

import numpy

from dbr.datasets import _loader_utils

_N_TRAIN = 1437


def get_digits(
    withlabel=True, ndim=1, scale=1.0, dtype=None, label_dtype=numpy.int32, rgb_format=False
):
    """Get the handwritten-digits dataset bundled with scikit-learn, split in train and test.

    This is the test part of the UCI "Optical Recognition of Handwritten Digits" set as
    :func:`sklearn.datasets.load_digits` reads it from scikit-learn's own files: 1,797
    images of the digits 0 to 9, 8x8 pixels with integer values in ``[0, 16]``. Nothing is
    downloaded or cached. Needs the ``sklearn`` extra (``pip install
    "dbr-datasets[sklearn]"``).

    The split is fixed and not shuffled: the first 1,437 examples in scikit-learn's order
    (80%) form the training set and the last 360 the test set. It is the same on every
    call and every machine.

    Args:
        withlabel (bool): Return datasets of (image, label) pairs; otherwise return the
            image arrays alone.
        ndim (int): Shape of each image: 1 gives (64,), 2 gives (8, 8) and 3 gives
            (1, 8, 8) or, with ``rgb_format``, (3, 8, 8).
        scale (float): Pixels are scaled from ``[0, 16]`` to the interval ``[0, scale]``.
        dtype: Floating dtype of the images; ``None`` means ``dbr.core.config.dtype``.
        label_dtype: Dtype of the labels.
        rgb_format (bool): With ``ndim=3``, repeat the grey channel into three.

    Returns:
        tuple: ``(train, test)`` of 1,437 and 360 examples, each a
        :class:`~dbr.datasets.TupleDataset` of ``(image, label)`` when ``withlabel`` is
        true, else an array of images.

    Raises:
        ImportError: If scikit-learn is not installed.
        ValueError: If ``ndim`` is not 1, 2 or 3, or ``dtype`` is not floating.
    """
    image_dtype = _loader_utils.check_image_options(ndim, (1, 2, 3), dtype, "get_digits")
    try:
        from sklearn.datasets import load_digits
    except ImportError as error:
        raise ImportError(
            'get_digits needs scikit-learn: pip install "dbr-datasets[sklearn]"'
        ) from error
    bunch = load_digits()
    images = bunch.data.astype(numpy.uint8)
    labels = bunch.target.astype(numpy.uint8)
    return tuple(
        _loader_utils.image_dataset(
            images[part],
            labels[part],
            withlabel=withlabel,
            ndim=ndim,
            scale=scale,
            dtype=image_dtype,
            label_dtype=label_dtype,
            rgb_format=rgb_format,
            side=8,
            max_value=16,
        )
        for part in (slice(None, _N_TRAIN), slice(_N_TRAIN, None))
    )
