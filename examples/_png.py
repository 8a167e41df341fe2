"""Write image grids as PNG files with only the standard library and NumPy.

The examples that generate images (``dcgan/``, ``vae/``) share this helper:
:func:`tile_images` lays a batch out as one grid and :func:`write_png` writes a
uint8 grey or RGB array as an 8-bit PNG (zlib-compressed scanlines, filter 0),
through a temporary file renamed into place so that a reader never sees half
a file.
"""

import os
import struct
import tempfile
import zlib

import numpy

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR_TYPES = {1: 0, 3: 2}  # channels -> PNG colour type (0: grey, 2: RGB)


def _chunk(kind, data):
    """One PNG chunk: length, type, data and the CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(image):
    """Return the bytes of an 8-bit PNG holding ``image``.

    Args:
        image (numpy.ndarray): uint8 of shape ``(height, width)`` or
            ``(height, width, 1)`` (grey) or ``(height, width, 3)`` (RGB).

    Returns:
        bytes: the PNG file's contents.
    """
    image = numpy.asarray(image)
    if image.dtype != numpy.uint8:
        raise TypeError(f"encode_png: expected a uint8 array, got {image.dtype}")
    if image.ndim == 2:
        image = image[:, :, None]
    if image.ndim != 3 or image.shape[2] not in _COLOUR_TYPES or 0 in image.shape[:2]:
        raise ValueError(
            "encode_png: expected a non-empty (height, width), (height, width, 1) or "
            f"(height, width, 3) array, got the shape {image.shape}"
        )
    height, width, channels = image.shape
    rows = numpy.ascontiguousarray(image).reshape(height, width * channels)
    scanlines = numpy.zeros((height, 1 + width * channels), dtype=numpy.uint8)
    scanlines[:, 1:] = rows  # each scanline starts with its filter type, 0 (none)
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOUR_TYPES[channels], 0, 0, 0)
    return (
        PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(scanlines.tobytes(), 6))
        + _chunk(b"IEND", b"")
    )


def write_png(path, image):
    """Write ``image`` (see :func:`encode_png`) to ``path`` atomically; returns ``path``."""
    data = encode_png(image)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".png", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def tile_images(images, rows, cols, padding=1, background=0):
    """Lay out a batch of images as a ``rows`` x ``cols`` grid of uint8 pixels.

    Args:
        images (numpy.ndarray): ``(n, height, width)`` grey or
            ``(n, channels, height, width)`` with 1 or 3 channels, with
            ``n <= rows * cols``. Floating-point values are taken to lie in
            [0, 1] (clipped, then scaled to 0..255); uint8 values are used as
            they are.
        rows (int): number of rows of the grid.
        cols (int): number of columns of the grid.
        padding (int): pixels between neighbouring images and around the grid.
        background (int): the grey level of the padding and of empty cells.

    Returns:
        numpy.ndarray: uint8 of shape ``(H, W)`` for grey images or
        ``(H, W, 3)`` for RGB ones, ready for :func:`write_png`.
    """
    images = numpy.asarray(images)
    if images.ndim == 3:
        images = images[:, None]
    if images.ndim != 4 or images.shape[1] not in _COLOUR_TYPES:
        raise ValueError(
            "tile_images: expected (n, height, width) or (n, channels, height, width) with "
            f"1 or 3 channels, got the shape {images.shape}"
        )
    n, channels, height, width = images.shape
    if n > rows * cols:
        raise ValueError(f"tile_images: {n} images do not fit a {rows}x{cols} grid")
    if images.dtype != numpy.uint8:
        images = numpy.rint(numpy.clip(images, 0.0, 1.0) * 255.0).astype(numpy.uint8)
    grid = numpy.full(
        (channels, padding + rows * (height + padding), padding + cols * (width + padding)),
        background,
        dtype=numpy.uint8,
    )
    for i in range(n):
        top = padding + (i // cols) * (height + padding)
        left = padding + (i % cols) * (width + padding)
        grid[:, top : top + height, left : left + width] = images[i]
    return grid[0] if channels == 1 else grid.transpose(1, 2, 0)
