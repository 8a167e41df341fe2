"""Loss links that own parameters, and the Walker alias sampler they draw negatives with."""

from dbr.links.loss.black_out import BlackOut
from dbr.links.loss.crf1d import CRF1d
from dbr.links.loss.hierarchical_softmax import BinaryHierarchicalSoftmax
from dbr.links.loss.negative_sampling import NegativeSampling
from dbr.links.loss.walker_alias import WalkerAlias

__all__ = ["BinaryHierarchicalSoftmax", "BlackOut", "CRF1d", "NegativeSampling", "WalkerAlias"]
