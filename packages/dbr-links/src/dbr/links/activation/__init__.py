"""Activation links with learnable parameters."""

from dbr.links.activation.maxout import Maxout
from dbr.links.activation.prelu import PReLU
from dbr.links.activation.swish import Swish

__all__ = ["Maxout", "PReLU", "Swish"]
