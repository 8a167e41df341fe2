"""Initializers: objects that fill parameter arrays in place.

Each initializer is called on an array, ``initializer(array)``, and
overwrites it. :func:`generate_array` allocates and fills a new array;
:func:`get_initializer` turns a link's ``initialW``-style argument (None, a
scalar, an array or an initializer) into an initializer.
"""

from dbr.core.initializers.constant import Constant, Identity, NaN, One, Zero
from dbr.core.initializers.fans import get_fans
from dbr.core.initializers.generate import _get_initializer as _get_initializer
from dbr.core.initializers.generate import generate_array, get_initializer
from dbr.core.initializers.initializer import Initializer
from dbr.core.initializers.normal import GlorotNormal, HeNormal, LeCunNormal, Normal
from dbr.core.initializers.orthogonal import Orthogonal
from dbr.core.initializers.sampling import DownsamplingConvFilter, UpsamplingDeconvFilter
from dbr.core.initializers.uniform import GlorotUniform, HeUniform, LeCunUniform, Uniform

__all__ = [
    "Constant",
    "DownsamplingConvFilter",
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "Identity",
    "Initializer",
    "LeCunNormal",
    "LeCunUniform",
    "NaN",
    "Normal",
    "One",
    "Orthogonal",
    "Uniform",
    "UpsamplingDeconvFilter",
    "Zero",
    "generate_array",
    "get_fans",
    "get_initializer",
]
