"""Sphinx configuration for dbr's documentation, built by ``nox -s docs``.

The API reference pages under ``reference/`` are written at the start of each
build by ``_ext/apiref.py`` from the packages' ``__all__``, so a new public
name appears (or the build fails, naming it) without editing a page by hand.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "dbr"
author = "the dbr authors"
copyright = "the dbr authors"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinx.ext.intersphinx",
    "apiref",
    # MathJax from the wheel, copied into _static: no CDN, so math renders offline.
    "sphinx-mathjax-offline",
]

# gallery/_runs holds snippets that the gallery pages include, not pages.
exclude_patterns = ["_build", ".gitignore", "gallery/_runs"]
html_theme = "furo"
html_title = "dbr"

autodoc_member_order = "bysource"
autodoc_typehints = "none"
autosummary_generate = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# Attributes sections become fields, so a property documented both ways is one entry.
napoleon_use_ivar = True

# A type named in a docstring (``Variable``) may match several objects (the
# class and type_check's expression of that name); that ambiguity is no error.
suppress_warnings = ["ref.python"]

# Cross-references are checked (nitpicky). Not checked: the words of
# napoleon's type fields that name no object ("array", "ints", "pair", a bare
# class name such as "ResNetLayers"), other projects' objects (no
# intersphinx: nothing is fetched), private names that show-inheritance
# lists as bases, and the public bases the reference leaves out.
nitpicky = True
nitpick_ignore_regex = [
    ("py:class", r"[^.]+"),
    (
        "py:.*",
        r"(numpy|cupy|os|io|time|typing|collections|pathlib|pickle|threading|multiprocessing"
        r"|concurrent|mpi4py|onnx|onnxruntime|h5py|matplotlib|scipy|sklearn|tqdm|PIL)\..*",
    ),
    ("py:.*", r".*\._.*|_\w+"),
    ("py:.*", r"__\w+__|open"),  # Python's own
    ("py:class", r"dbr\.links\.(rnn|model)\..*Base|dbr\.links\.model\.vision\..*Layers"),
    # Attributes documented as fields (napoleon_use_ivar) have no target.
    ("py:attr", r"(Deserializer\.)?(dry_run|hyperparam|use_auto_new_epoch)"),
    # Public names that no __all__ exports, so no reference page documents.
    ("py:func", r"prepare"),
    ("py:mod", r"dbr\.training\.extensions\.snapshot_writers"),
]

# No network during the build: intersphinx has no inventories to fetch.
intersphinx_mapping = {}

# Docstring examples run in each package's pytest session; the doctest
# builder runs the guides' blocks only.
doctest_test_doctest_blocks = ""
doctest_global_setup = """
import importlib.util

import numpy as np

cupy_installed = importlib.util.find_spec("cupy") is not None
"""
doctest_default_flags = (
    __import__("doctest").ELLIPSIS
    | __import__("doctest").NORMALIZE_WHITESPACE
    | __import__("doctest").DONT_ACCEPT_TRUE_FOR_1
)
