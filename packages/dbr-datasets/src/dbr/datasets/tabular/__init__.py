"""dbr.datasets.tabular: TabularDataset, datasets of named columns, and its helpers.

``TabularDataset`` reads blocks of rows and columns at once; its views
(slice, astuple/asdict, concat, join, transform, transform_batch,
with_converter) are classes of the private modules here, imported when first
asked for. :func:`from_data` makes one of lists, arrays and functions;
:class:`DelegateDataset` is a base for classes built around one.
"""

from dbr.datasets.tabular.delegate_dataset import DelegateDataset
from dbr.datasets.tabular.from_data import from_data
from dbr.datasets.tabular.tabular_dataset import TabularDataset

__all__ = ["DelegateDataset", "TabularDataset", "from_data"]
