"""Export of a recorded computational graph to Graphviz DOT.

:func:`build_computational_graph` walks the graph backward from some outputs
and returns a :class:`ComputationalGraph`, whose :meth:`~ComputationalGraph.dump`
gives DOT text (render it with ``dot -Tpng graph.dot -o graph.png``).
"""

import heapq

from dbr.core.function_node import FunctionNode
from dbr.core.variable import Variable, VariableNode

_VARIABLE_STYLE = {"shape": "octagon", "fillcolor": "#E0E0E0", "style": "filled"}
_FUNCTION_STYLE = {"shape": "record", "fillcolor": "#6495ED", "style": "filled"}
_RANKDIRS = ("TB", "BT", "LR", "RL")


def _style(style, default, argname):
    if style == "default":
        return dict(default)
    if style is None:
        return {}
    if isinstance(style, dict):
        return dict(style)
    raise TypeError(
        f"build_computational_graph: expected {argname} to be a dict of DOT attributes, "
        f"'default' or None, got {style!r}"
    )


def _quote(value):
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


class ComputationalGraph:
    """A computational graph: VariableNodes and FunctionNodes joined by edges of data flow.

    Args:
        nodes (list): VariableNodes and FunctionNodes.
        edges (list of tuple): ``(head, tail)`` pairs, each from an input
            VariableNode to the FunctionNode consuming it, or from a
            FunctionNode to a VariableNode it produced.
        variable_style (dict, 'default' or None): DOT attributes of variable
            nodes; ``'default'`` is ``shape=octagon, fillcolor=#E0E0E0,
            style=filled``.
        function_style (dict, 'default' or None): DOT attributes of function
            nodes; ``'default'`` is ``shape=record, fillcolor=#6495ED,
            style=filled``.
        rankdir (str): the direction of the drawing, ``'TB'`` (top to bottom),
            ``'BT'``, ``'LR'`` or ``'RL'``.
        remove_variable (bool): draw only the functions, joined directly.
        show_name (bool): prefix the label of a named variable with its name.

    A node's DOT id is its index in ``nodes``, so the same graph always dumps
    to the same text.
    """

    def __init__(
        self,
        nodes,
        edges,
        variable_style="default",
        function_style="default",
        rankdir="TB",
        remove_variable=False,
        show_name=True,
    ):
        if rankdir not in _RANKDIRS:
            raise ValueError(
                f"ComputationalGraph: expected rankdir to be one of {_RANKDIRS}, got {rankdir!r}"
            )
        self.nodes = list(nodes)
        self.edges = list(edges)
        self.variable_style = _style(variable_style, _VARIABLE_STYLE, "variable_style")
        self.function_style = _style(function_style, _FUNCTION_STYLE, "function_style")
        self.rankdir = rankdir
        self.remove_variable = remove_variable
        self.show_name = show_name

    def _node_statement(self, index, node):
        if isinstance(node, VariableNode):
            label = node.label
            if self.show_name and node.name is not None:
                label = f"{node.name}: {label}"
            attributes = {"label": label, **self.variable_style}
        else:
            attributes = {"label": node.label, **self.function_style}
        body = ",".join(f"{key}={_quote(value)}" for key, value in sorted(attributes.items()))
        return f"{index} [{body}];"

    def _function_edges(self):
        """Edges between functions: from each input's creator to the function consuming it."""
        members = {id(node) for node in self.nodes}
        edges = {}
        for head, tail in self.edges:
            if isinstance(head, VariableNode) and isinstance(tail, FunctionNode):
                creator = head.creator_node
                if creator is not None and id(creator) in members:
                    edges[(id(creator), id(tail))] = (creator, tail)
        return list(edges.values())

    def _to_dot(self):
        ids = {id(node): i for i, node in enumerate(self.nodes)}
        parts = [f"digraph graphname{{rankdir={self.rankdir};"]
        for index, node in enumerate(self.nodes):
            if self.remove_variable and isinstance(node, VariableNode):
                continue
            parts.append(self._node_statement(index, node))
        edges = self._function_edges() if self.remove_variable else self.edges
        drawn = set()
        for head, tail in edges:
            edge = (ids[id(head)], ids[id(tail)])
            if edge not in drawn:
                drawn.add(edge)
                parts.append(f"{edge[0]} -> {edge[1]};")
        parts.append("}")
        return "".join(parts)

    def dump(self, format="dot"):  # Chainer's name
        """Return the graph as text in ``format`` (only ``'dot'``, Graphviz DOT, is supported)."""
        if format == "dot":
            return self._to_dot()
        raise NotImplementedError(
            f"ComputationalGraph.dump: only format='dot' is supported, got {format!r}"
        )

    def __repr__(self):
        return f"<ComputationalGraph with {len(self.nodes)} nodes and {len(self.edges)} edges>"


def build_computational_graph(
    outputs,
    remove_split=True,
    variable_style="default",
    function_style="default",
    rankdir="TB",
    remove_variable=False,
    show_name=True,
):
    """Build the graph of the functions and variables from which ``outputs`` were computed.

    The graph holds every node backward-reachable from the outputs, found by
    following ``creator_node`` from a variable and ``inputs`` from a function.
    Intermediate variables whose Variable object is gone and whose array was
    not retained are drawn with the label ``(unknown)``.

    Args:
        outputs: a Variable, VariableNode or FunctionNode, or a list or tuple of them.
        remove_split (bool): must be True (kept for Chainer compatibility: split
            nodes no longer exist).
        variable_style, function_style, rankdir, remove_variable, show_name:
            drawing options, see :class:`ComputationalGraph`.

    Returns:
        ComputationalGraph: nodes in the order in which the walk met them
        (outputs first), edges in the direction of the data flow.

    >>> import numpy as np
    >>> from dbr.core import Variable, ops
    >>> x = Variable(np.ones(3, np.float32), name='x')
    >>> g = build_computational_graph(ops.sum(x * 2.0))
    >>> [type(n).__name__ for n in g.nodes]
    ['VariableNode', 'Sum', 'VariableNode', 'MulConstant', 'VariableNode']
    >>> g.dump()[:36]
    'digraph graphname{rankdir=TB;0 [fill'
    """
    if not remove_split:
        raise ValueError(
            "build_computational_graph: remove_split=False is not supported "
            "(the graph has no split nodes)"
        )
    node_types = (Variable, VariableNode, FunctionNode)
    if isinstance(outputs, node_types):
        outputs = [outputs]
    elif isinstance(outputs, (list, tuple)):
        for o in outputs:
            if not isinstance(o, node_types):
                raise TypeError(
                    "build_computational_graph: expected every element of outputs to be a "
                    f"Variable, VariableNode or FunctionNode, got {type(o).__name__}"
                )
    else:
        raise TypeError(
            "build_computational_graph: expected outputs to be a Variable, VariableNode, "
            f"FunctionNode or a list or tuple of them, got {type(outputs).__name__}"
        )

    nodes = []
    seen_nodes = set()
    edges = []
    seen_edges = set()
    heap = []
    counter = 0

    def visit(node):
        nonlocal counter
        if id(node) in seen_nodes:
            return
        seen_nodes.add(id(node))
        nodes.append(node)
        heapq.heappush(heap, (-node.rank, counter, node))
        counter += 1

    def connect(head, tail):
        key = (id(head), id(tail))
        if key not in seen_edges:
            seen_edges.add(key)
            edges.append((head, tail))

    for o in outputs:
        visit(o.node if isinstance(o, Variable) else o)
    while heap:
        node = heapq.heappop(heap)[2]
        if isinstance(node, VariableNode):
            creator = node.creator_node
            if creator is not None:
                visit(creator)
                connect(creator, node)
        else:
            for x in node.inputs or ():
                visit(x)
                connect(x, node)
    return ComputationalGraph(
        nodes, edges, variable_style, function_style, rankdir, remove_variable, show_name
    )
