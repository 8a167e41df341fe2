"""discriminative_margin_based_clustering_loss: pull/push losses on pixel embeddings.

De Brabandere et al., "Semantic Instance Segmentation with a Discriminative
Loss Function" (2017). Composed of differentiable functions; the terms and
their normalizations follow Chainer's implementation exactly.
"""

import numbers

import numpy

from dbr.core import Variable, backend, ops
from dbr.functions._invalid_type import invalid_type
from dbr.functions.activation.relu import relu
from dbr.functions.math.sqrt import sqrt

_WHO = "discriminative_margin_based_clustering_loss"


def _l1_norm(x, axis):
    return ops.sum(ops.absolute(x), axis=axis)


def _l2_norm(x, axis):
    # Where every element is 0 the norm is 0 and so is its gradient (sqrt's
    # derivative at 0 would make it NaN): the zero sums are replaced by 1
    # under the square root and masked out after it. sqrt (as Chainer's F.sqrt) rather
    # than ``** 0.5``: its second derivative goes through 1 / y**2, where the power's
    # s ** -1.5 overflows float16 for sums below 6e-4 and turns a zero gradient to NaN.
    squares = ops.sum(x * x, axis=axis)
    zero = (squares.array == 0).astype(squares.dtype)
    return sqrt(squares + zero) * (1 - zero)


def discriminative_margin_based_clustering_loss(
    embeddings,
    labels,
    delta_v,
    delta_d,
    max_embedding_dim,
    norm=1,
    alpha=1.0,
    beta=1.0,
    gamma=0.001,
):
    """Discriminative margin-based clustering loss for instance segmentation.

    Pixels of instance ``c`` (where ``labels == c + 1``, for ``c`` in
    ``[0, C)`` with ``C = max_embedding_dim``; label 0 is background) are
    pulled towards their mean embedding :math:`\\mu_{c}` of each image, and
    the means of different instances are pushed apart. With
    :math:`\\|\\cdot\\|` the L1 or L2 norm over the embedding axis and
    :math:`[z]_+ = \\max(z, 0)`:

    - variance (pull): for each ``c``, the sum over the batch's pixels of
      :math:`[\\|\\mu_c - e_{px}\\| m_{c,px} - \\delta_v]_+^2`, where
      :math:`m_{c,px}` masks the pixels of instance ``c``, divided by the
      number of those pixels (at least 1); summed over ``c`` and divided by
      ``C``;
    - distance (push): :math:`[2 \\delta_d - \\|\\mu_a - \\mu_b\\|]_+^2` summed
      over every pair ``a < b`` of instance ids and every image, divided by
      the number of pairs times the batch size (instances absent from an
      image have mean 0, as in Chainer);
    - regularization: the norm of each instance's means taken jointly over
      the batch and the embedding axes, summed over ``c`` and divided by
      ``C`` times the batch size.

    Args:
        embeddings (Variable or array): ``(B, C, H, W)`` pixel embeddings
            (float16, float32 or float64), ``C == max_embedding_dim``.
        labels (Variable or array): ``(B, H, W)`` integer instance ids (0 for
            the background, ``c + 1`` for instance ``c``).
        delta_v (float): the distance within which pixels are not pulled.
        delta_d (float): half the distance beyond which means are not pushed.
        max_embedding_dim (int): the embedding dimension ``C``, which is also
            the number of instance ids considered.
        norm (int): 1 or 2, the norm of the distances.
        alpha (float): the weight of the variance term.
        beta (float): the weight of the distance term.
        gamma (float): the weight of the regularization term.

    Returns:
        tuple of Variables: ``(alpha * variance, beta * distance, gamma *
        regularization)``, 0-d arrays of ``embeddings``' dtype, differentiable
        twice by ``embeddings``. With ``norm=2`` the gradient of a zero
        distance is taken as 0 (Chainer gives NaN there).

    >>> import numpy as np
    >>> emb = np.zeros((1, 2, 1, 2), np.float32)
    >>> emb[0, :, 0, 1] = 1.0  # pixel 0 at (0, 0), pixel 1 at (1, 1)
    >>> labels = np.array([[[1, 2]]], np.int32)
    >>> var, dist, reg = discriminative_margin_based_clustering_loss(
    ...     emb, labels, 0.5, 1.5, 2)
    >>> var.array, dist.array, reg.array  # the L1 distance of the means, 2, is below 3
    (array(0., dtype=float32), array(1., dtype=float32), array(0.001, dtype=float32))
    """
    who = "discriminative_margin_based_clustering_loss"
    if not isinstance(max_embedding_dim, numbers.Integral) or isinstance(max_embedding_dim, bool):
        raise TypeError(
            f"{who}: expected max_embedding_dim to be an int, got {max_embedding_dim!r}"
        )
    if max_embedding_dim <= 0:
        raise ValueError(f"{who}: expected max_embedding_dim > 0, got {max_embedding_dim}")
    if norm not in (1, 2) or isinstance(norm, bool):
        raise ValueError(f"{who}: expected norm to be 1 or 2, got {norm!r}")
    for name, value in (
        ("delta_v", delta_v),
        ("delta_d", delta_d),
        ("alpha", alpha),
        ("beta", beta),
        ("gamma", gamma),
    ):
        if not isinstance(value, numbers.Real):
            raise TypeError(f"{who}: expected {name} to be a real number, got {value!r}")
    emb_array = embeddings.array if isinstance(embeddings, Variable) else embeddings
    labels = labels.array if isinstance(labels, Variable) else labels
    if emb_array.dtype.kind != "f":
        raise invalid_type(
            _WHO, "embeddings.dtype.kind == 'f'", f"embeddings.dtype == {emb_array.dtype}"
        )
    if emb_array.ndim != 4:
        raise invalid_type(_WHO, "embeddings.ndim == 4", f"embeddings.ndim == {emb_array.ndim}")
    if labels.dtype.kind not in "iu":
        raise invalid_type(_WHO, "labels.dtype.kind in 'iu'", f"labels.dtype == {labels.dtype}")
    n_batch, n_dim, height, width = emb_array.shape
    if labels.shape != (n_batch, height, width):
        raise invalid_type(
            _WHO,
            "labels.shape == (embeddings.shape[0],) + embeddings.shape[2:]",
            f"{labels.shape} != {(n_batch, height, width)}",
        )
    if n_dim != max_embedding_dim:
        raise ValueError(
            f"{who}: expected embeddings.shape[1] == max_embedding_dim, got "
            f"{n_dim} != {max_embedding_dim}"
        )
    norm = _l1_norm if norm == 1 else _l2_norm
    n_inst = max_embedding_dim
    dtype = emb_array.dtype
    xp = backend.get_array_module(emb_array)
    ids = xp.arange(1, n_inst + 1).reshape(n_inst, 1, 1, 1)
    # masks[c, b, h, w]: pixel (h, w) of image b belongs to instance c.
    masks = (labels[None] == ids).astype(dtype)
    counts = masks.sum(axis=(2, 3), dtype=numpy.float64)
    pixels = masks.reshape(n_inst, n_batch, height * width).transpose(1, 2, 0)
    sums = ops.matmul(ops.reshape(embeddings, (n_batch, n_dim, height * width)), pixels)
    scale = (1 / xp.maximum(counts, 1)).T.astype(dtype)[:, None, :]
    means = ops.transpose(sums * scale, (2, 0, 1))

    regularization = ops.sum(norm(means, (1, 2))) * (1.0 / (n_inst * n_batch))

    diff = ops.reshape(means, (n_inst, n_batch, n_dim, 1, 1)) - ops.reshape(
        embeddings, (1, n_batch, n_dim, height, width)
    )
    distance = norm(diff * masks[:, :, None], 2)
    pull = relu(distance - float(delta_v)) ** 2
    per_instance = ops.sum(pull, axis=(1, 2, 3)) * (1 / xp.maximum(counts.sum(axis=1), 1)).astype(
        dtype
    )
    variance = ops.sum(per_instance) * (1.0 / n_inst)

    first, second = numpy.triu_indices(n_inst, 1)
    n_pairs = len(first)
    first, second = xp.asarray(first), xp.asarray(second)
    pair_distance = norm(ops.get_item(means, first) - ops.get_item(means, second), 2)
    push = relu(2 * float(delta_d) - pair_distance) ** 2
    distance_loss = ops.sum(push) * (1.0 / max(n_pairs * n_batch, 1))

    return alpha * variance, beta * distance_loss, gamma * regularization
