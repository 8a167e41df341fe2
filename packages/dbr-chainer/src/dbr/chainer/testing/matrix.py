"""``generate_matrix``: random matrices with chosen singular values."""

import numpy

__all__ = ["generate_matrix"]


def _broadcast_to(array, shape):
    return numpy.broadcast_to(array, shape)


def generate_matrix(shape, dtype=float, **kwargs):
    """generate_matrix(shape, dtype=float, *, singular_values)

    A random array of shape ``(B..., M, N)`` whose matrices have the given
    singular values (broadcast to ``(B..., min(M, N))``), for inputs of tests
    that are unstable on ill-conditioned matrices. ``dtype`` must be a
    floating or complex dtype; ``singular_values`` must be real and non-negative.
    """
    unknown = set(kwargs) - {"singular_values"}
    if unknown:
        raise TypeError(f"got unexpected keyword argument(s) {', '.join(sorted(unknown))}")
    singular_values = kwargs.get("singular_values")
    if len(shape) <= 1:
        raise ValueError(f"shape {shape} is invalid for matrices: too few axes")
    dtype = numpy.dtype(dtype)
    if dtype.kind not in "fc":
        raise TypeError(f"dtype {dtype} is not supported")
    if singular_values is None:
        raise TypeError("singular_values is not given")
    singular_values = numpy.asarray(singular_values)
    if not numpy.isrealobj(singular_values):
        raise TypeError("singular_values is not real")
    if (singular_values < 0).any():
        raise ValueError("negative singular value is given")
    a = numpy.random.randn(*shape)
    if dtype.kind == "c":
        a = a + 1j * numpy.random.randn(*shape)
    u, s, vh = numpy.linalg.svd(a, full_matrices=False)
    sv = _broadcast_to(singular_values, s.shape)
    return numpy.einsum("...ik,...k,...kj->...ij", u, sv, vh).astype(dtype)
