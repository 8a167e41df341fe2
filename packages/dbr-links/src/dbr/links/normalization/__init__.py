"""Normalization links, holding their scale/shift parameters and running statistics."""

from dbr.links.normalization.batch_normalization import BatchNormalization
from dbr.links.normalization.batch_renormalization import BatchRenormalization
from dbr.links.normalization.decorrelated_batch_normalization import (
    DecorrelatedBatchNormalization,
)
from dbr.links.normalization.group_normalization import GroupNormalization
from dbr.links.normalization.layer_normalization import LayerNormalization

__all__ = [
    "BatchNormalization",
    "BatchRenormalization",
    "DecorrelatedBatchNormalization",
    "GroupNormalization",
    "LayerNormalization",
]
