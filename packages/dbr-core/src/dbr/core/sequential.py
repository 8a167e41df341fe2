"""Sequential: a model whose forward pass calls its layers one after another."""

import copy

import numpy

from dbr.core.link import ChainList, Link, _check_copy_mode

__all__ = ["Sequential"]


def _layer_type_name(layer):
    if isinstance(layer, Link):
        return type(layer).__name__
    return getattr(layer, "__name__", type(layer).__name__)


class Sequential(ChainList):
    """A model that calls its layers in order, feeding each one's output to the next.

    Layers may be Links or any callables (functions, lambdas,
    ``functools.partial`` objects). A layer that returns a tuple has it unpacked
    as the arguments of the next layer. The Links among the layers are the
    children of the Sequential, named ``'0'``, ``'1'``, ... in the order they
    appear (functions take no index), so the parameters of the second Link are
    at ``'/1/W'``. The list interface (indexing, slicing, ``append``,
    ``insert``, ``pop``, ``remove``, ``+``, ...) works on all the layers.

    Args:
        *layers: the callables to apply, in order.

    >>> import numpy
    >>> from dbr.core import Sequential
    >>> model = Sequential(lambda x: x * 2, lambda x: x + 1)
    >>> model(numpy.array([1.0, 2.0]))
    array([3., 5.])
    """

    def __init__(self, *layers):
        super().__init__()
        self._layers = []
        for layer in layers:
            self.append(layer)

    def _check_layer(self, who, layer):
        if not callable(layer):
            raise TypeError(
                f"{type(self).__name__}.{who}: expected a callable layer (a Link or "
                f"a function), got {type(layer).__name__} {layer!r}"
            )

    def _sync_children(self):
        self._children = [layer for layer in self._layers if isinstance(layer, Link)]
        self._rename_children()

    def forward(self, *x):
        """Apply the layers in order to the inputs ``x`` and return the last output.

        A tuple returned by a layer is unpacked into the arguments of the next
        one. An empty Sequential returns its input (a tuple if given several).
        """
        if not self._layers:
            return x[0] if len(x) == 1 else x
        for layer in self._layers:
            x = layer(*x) if isinstance(x, tuple) else layer(x)
        return x

    # -- the list interface ------------------------------------------------------
    def __len__(self):
        return len(self._layers)

    def __getitem__(self, index):
        """The layer at ``index`` (a list of layers for a slice)."""
        return self._layers[index]

    def __setitem__(self, index, layer):
        """Replace the layer at ``index`` (or the layers in a slice, by an iterable of layers)."""
        if isinstance(index, slice):
            layer = list(layer)
            for item in layer:
                self._check_layer("__setitem__", item)
        else:
            self._check_layer("__setitem__", layer)
        self._layers[index] = layer
        self._sync_children()

    def __delitem__(self, index):
        """Remove the layer at ``index`` (or the layers in a slice)."""
        del self._layers[index]
        self._sync_children()

    def __iter__(self):
        return iter(self._layers)

    def __reversed__(self):
        return reversed(self._layers)

    def __contains__(self, layer):
        return layer in self._layers

    def insert(self, index, layer):
        """Insert ``layer`` before position ``index``."""
        self._check_layer("insert", layer)
        self._layers.insert(index, layer)
        self._sync_children()

    def append(self, layer):
        """Add ``layer`` at the end."""
        self._check_layer("append", layer)
        self._layers.append(layer)
        if isinstance(layer, Link):
            self._children.append(layer)
            layer.name = str(len(self._children) - 1)

    def extend(self, layers):
        """Add every layer of ``layers`` (a Sequential or an iterable of callables) at the end."""
        for layer in list(layers):
            self.append(layer)

    def pop(self, index=-1):
        """Remove and return the layer at ``index`` (the last one by default)."""
        layer = self._layers[index]
        del self[index]
        return layer

    def remove(self, layer):
        """Remove the first occurrence of ``layer``; ValueError if it is absent."""
        if layer not in self._layers:
            raise ValueError(f"{type(self).__name__}.remove: {layer!r} is not a layer of it")
        del self[self._layers.index(layer)]

    def clear(self):
        """Remove every layer."""
        self._layers = []
        self._children = []

    def index(self, layer, start=0, stop=None):
        """The position of the first occurrence of ``layer`` in ``[start, stop)``."""
        return self._layers.index(layer, start, len(self._layers) if stop is None else stop)

    def count(self, layer):
        """The number of occurrences of ``layer``."""
        return self._layers.count(layer)

    def remove_by_layer_type(self, type_name):
        """Remove every layer whose type name is ``type_name``.

        The type name of a Link is its class name (``'Linear'``); that of a
        function is its ``__name__`` (``'relu'``); that of another callable
        object is its class name.
        """
        self._layers = [layer for layer in self._layers if _layer_type_name(layer) != type_name]
        self._sync_children()

    def count_by_layer_type(self, type_name):
        """The number of layers whose type name is ``type_name`` (see remove_by_layer_type)."""
        return sum(1 for layer in self._layers if _layer_type_name(layer) == type_name)

    def __add__(self, other):
        """A new Sequential: these layers then ``other``'s (a Sequential or a single layer)."""
        ret = Sequential(*self._layers)
        ret._concat("+", other)
        return ret

    def __radd__(self, other):
        """A new Sequential: the single layer ``other`` then these layers."""
        self._check_layer("+", other)
        return Sequential(other, *self._layers)

    def __iadd__(self, other):
        """Append ``other``'s layers (a Sequential) or ``other`` itself (a layer), in place."""
        self._concat("+=", other)
        return self

    def _concat(self, who, other):
        if isinstance(other, Sequential):
            self.extend(other._layers)
        else:
            self._check_layer(who, other)
            self.append(other)

    def flatten(self):
        """A new Sequential of the same layers with nested Sequentials expanded in place."""
        ret = Sequential()
        for layer in self._layers:
            if isinstance(layer, Sequential):
                ret.extend(layer.flatten())
            else:
                ret.append(layer)
        return ret

    def _copy_shared(self):
        ret = super()._copy_shared()
        copies = {id(old): new for old, new in zip(self._children, ret._children)}
        ret._layers = [
            copies[id(layer)] if isinstance(layer, Link) else copy.copy(layer)
            for layer in self._layers
        ]
        ret._sync_children()
        return ret

    def _printed_items(self):
        # Functions print among the links, in order.
        return self._layers


def _repeat(self, n_repeat, mode="init"):
    """A :class:`~dbr.core.Sequential` of ``n_repeat`` copies of this link.

    Args:
        n_repeat (int): the number of copies (0 or less gives an empty Sequential).
        mode (str): how each copy is made, as in :meth:`copy`: ``'init'``
            (default, fresh initial values), ``'copy'`` or ``'share'``.
    """
    _check_copy_mode(f"{type(self).__name__}.repeat", mode)
    if not isinstance(n_repeat, (int, numpy.integer)) or isinstance(n_repeat, bool):
        raise TypeError(
            f"{type(self).__name__}.repeat: expected n_repeat to be an int, "
            f"got {type(n_repeat).__name__}"
        )
    ret = Sequential()
    for _ in range(n_repeat):
        ret.append(self.copy(mode))
    return ret


# Link.repeat builds a Sequential, which is a Link: bound here, as dbr.core.ops binds
# Variable's operators, so that link.py needs no import of this module.
Link.repeat = _repeat
