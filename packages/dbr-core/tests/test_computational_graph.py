import re

import numpy
import pytest

from dbr.core import FunctionNode, Variable, VariableNode, ops
from dbr.core.computational_graph import ComputationalGraph, build_computational_graph

_NODE = re.compile(r"(\d+) \[((?:[^\]\"]|\"(?:[^\"\\]|\\.)*\")*)\];")
_EDGE = re.compile(r"(\d+) -> (\d+);")
_ATTRIBUTE = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse_dot(text):
    """Return (rankdir, {id: {attribute: value}}, [(head id, tail id)]) of Chainer-style DOT."""
    match = re.fullmatch(r"digraph graphname\{rankdir=(\w+);(.*)\}", text)
    assert match, text
    rankdir, body = match.groups()
    nodes = {}
    for node_id, attributes in _NODE.findall(body):
        assert node_id not in nodes
        nodes[node_id] = {
            key: re.sub(r"\\(.)", r"\1", value) for key, value in _ATTRIBUTE.findall(attributes)
        }
    edges = _EDGE.findall(body)
    leftover = _EDGE.sub("", _NODE.sub("", body))
    assert leftover == "", leftover
    return rankdir, nodes, edges


def labels_of(nodes, edges):
    return sorted((nodes[h]["label"], nodes[t]["label"]) for h, t in edges)


@pytest.fixture
def affine():
    """loss = sum(x @ W + b), with every Variable kept alive."""
    x = Variable(numpy.arange(6, dtype=numpy.float32).reshape(2, 3), name="x")
    W = Variable(numpy.ones((3, 2), numpy.float32), name="W")
    b = Variable(numpy.zeros(2, numpy.float32), name="b")
    h = x @ W
    y = h + b
    loss = ops.sum(y)
    return {"x": x, "W": W, "b": b, "h": h, "y": y, "loss": loss}


def test_nodes_and_edges_follow_the_data_flow(affine):
    g = build_computational_graph([affine["loss"]])
    assert isinstance(g, ComputationalGraph)
    variables = [n for n in g.nodes if isinstance(n, VariableNode)]
    functions = [n for n in g.nodes if isinstance(n, FunctionNode)]
    assert {id(v) for v in variables} == {id(affine[k].node) for k in affine}
    assert sorted(f.label for f in functions) == ["MatMul", "Sum", "_ + _"]
    assert len(g.nodes) == 9
    matmul = affine["h"].creator_node
    add = affine["y"].creator_node
    expected = {
        (affine["x"].node, matmul),
        (affine["W"].node, matmul),
        (matmul, affine["h"].node),
        (affine["h"].node, add),
        (affine["b"].node, add),
        (add, affine["y"].node),
        (affine["y"].node, affine["loss"].creator_node),
        (affine["loss"].creator_node, affine["loss"].node),
    }
    assert len(g.edges) == 8
    assert {(id(h), id(t)) for h, t in g.edges} == {(id(h), id(t)) for h, t in expected}


def test_dot_text_has_labels_styles_and_edges(affine):
    rankdir, nodes, edges = parse_dot(build_computational_graph(affine["loss"]).dump())
    assert rankdir == "TB"
    assert len(nodes) == 9
    assert len(edges) == 8
    labels = sorted(n["label"] for n in nodes.values())
    assert labels == sorted(
        [
            "x: (2, 3), float32",
            "W: (3, 2), float32",
            "b: (2), float32",
            "(2, 2), float32",
            "(2, 2), float32",
            "float32",
            "MatMul",
            "_ + _",
            "Sum",
        ]
    )
    for attributes in nodes.values():
        if attributes["label"] in ("MatMul", "_ + _", "Sum"):
            style = {"shape": "record", "fillcolor": "#6495ED", "style": "filled"}
        else:
            style = {"shape": "octagon", "fillcolor": "#E0E0E0", "style": "filled"}
        assert attributes == {"label": attributes["label"], **style}
    assert labels_of(nodes, edges) == sorted(
        [
            ("x: (2, 3), float32", "MatMul"),
            ("W: (3, 2), float32", "MatMul"),
            ("MatMul", "(2, 2), float32"),
            ("(2, 2), float32", "_ + _"),
            ("b: (2), float32", "_ + _"),
            ("_ + _", "(2, 2), float32"),
            ("(2, 2), float32", "Sum"),
            ("Sum", "float32"),
        ]
    )


def test_ids_are_positions_in_nodes_and_the_dump_is_deterministic(affine):
    g = build_computational_graph(affine["loss"])
    text = g.dump()
    _, nodes, _ = parse_dot(text)
    assert sorted(nodes, key=int) == [str(i) for i in range(9)]
    assert nodes["0"]["label"] == "float32"  # the output comes first
    assert g.nodes[0] is affine["loss"].node
    for i, node in enumerate(g.nodes):
        if isinstance(node, FunctionNode):
            assert nodes[str(i)]["label"] == node.label
    assert build_computational_graph(affine["loss"]).dump() == text


def test_remove_variable_draws_functions_joined_directly(affine):
    g = build_computational_graph(affine["loss"], remove_variable=True)
    _, nodes, edges = parse_dot(g.dump())
    assert sorted(n["label"] for n in nodes.values()) == ["MatMul", "Sum", "_ + _"]
    assert labels_of(nodes, edges) == [("MatMul", "_ + _"), ("_ + _", "Sum")]
    assert len(g.nodes) == 9 and len(g.edges) == 8  # the graph itself is unchanged
    assert g.dump() == g.dump()


def test_remove_variable_keeps_every_consumer_of_a_shared_variable():
    x = Variable(numpy.ones(2, numpy.float32))
    h = -x
    y = ops.add(h * 2.0, h * 3.0)
    _, nodes, edges = parse_dot(build_computational_graph(y, remove_variable=True).dump())
    assert len(nodes) == 4
    assert labels_of(nodes, edges) == sorted(
        [
            ("__neg__", "_ * 2.0"),
            ("__neg__", "_ * 3.0"),
            ("_ * 2.0", "_ + _"),
            ("_ * 3.0", "_ + _"),
        ]
    )


class Split(FunctionNode):
    """Two outputs: the first and the second half of a vector."""

    def forward(self, inputs):
        x = inputs[0]
        return x[:1].copy(), x[1:].copy()


def test_remove_variable_joins_two_functions_once_even_through_two_variables():
    x = Variable(numpy.ones(2, numpy.float32))
    first, second = Split().apply((x,))
    y = first * second
    g = build_computational_graph(y, remove_variable=True)
    _, nodes, edges = parse_dot(g.dump())
    assert labels_of(nodes, edges) == [("Split", "_ * _")]
    _, _, all_edges = parse_dot(build_computational_graph(y).dump())
    assert len(all_edges) == 6  # x->Split->(first, second)->Mul->y


def test_the_constructor_draws_a_repeated_edge_once(affine):
    h = affine["h"]
    g = ComputationalGraph([h.node, h.creator_node], [(h.creator_node, h.node)] * 2)
    _, nodes, edges = parse_dot(g.dump())
    assert len(nodes) == 2
    assert edges == [("1", "0")]


def test_show_name_false_omits_variable_names(affine):
    _, nodes, _ = parse_dot(build_computational_graph(affine["loss"], show_name=False).dump())
    labels = {n["label"] for n in nodes.values()}
    assert "(2, 3), float32" in labels
    assert "(2), float32" in labels
    assert not any(":" in label for label in labels)


def test_custom_styles_and_rankdir(affine):
    g = build_computational_graph(
        affine["loss"],
        variable_style={"shape": "box", "color": "red"},
        function_style=None,
        rankdir="LR",
    )
    rankdir, nodes, _ = parse_dot(g.dump())
    assert rankdir == "LR"
    for attributes in nodes.values():
        if attributes["label"] in ("MatMul", "_ + _", "Sum"):
            assert set(attributes) == {"label"}
        else:
            assert attributes == {"label": attributes["label"], "shape": "box", "color": "red"}


def test_a_variable_used_twice_by_one_function_gives_one_edge():
    x = Variable(numpy.ones(2, numpy.float32), name="x")
    y = x * x
    g = build_computational_graph(y)
    _, nodes, edges = parse_dot(g.dump())
    assert len(nodes) == 3
    assert labels_of(nodes, edges) == [("_ * _", "(2), float32"), ("x: (2), float32", "_ * _")]


def test_several_outputs_share_their_common_nodes():
    x = Variable(numpy.ones(2, numpy.float32), name="x")
    h = x * 2.0
    a, b = -h, h * h
    g = build_computational_graph((a, b))
    assert len(g.nodes) == 7  # x, MulConstant, h, Neg, a, Mul, b
    assert len(g.edges) == 6  # x->MulConstant->h, h->Neg->a, h->Mul->b (one edge for h*h)
    assert g.nodes[0] is a.node and g.nodes[1] is b.node


def test_outputs_may_be_variable_nodes_or_function_nodes(affine):
    loss = affine["loss"]
    from_node = build_computational_graph([loss.node]).dump()
    assert from_node == build_computational_graph(loss).dump()
    g = build_computational_graph(affine["y"].creator_node)
    assert sorted(type(n).__name__ for n in g.nodes) == [
        "Add",
        "MatMul",
        "VariableNode",
        "VariableNode",
        "VariableNode",
        "VariableNode",
    ]


def test_a_lone_variable_is_a_graph_of_one_node():
    s = Variable(numpy.zeros((), numpy.float64), name="s")
    g = build_computational_graph(s)
    _, nodes, edges = parse_dot(g.dump())
    assert [n["label"] for n in nodes.values()] == ["s: float64"]
    assert edges == []


def test_a_dropped_intermediate_is_labelled_unknown():
    x = Variable(numpy.ones(3, numpy.float32), name="x")
    loss = ops.sum(x * 2.0)
    _, nodes, _ = parse_dot(build_computational_graph(loss).dump())
    assert sorted(n["label"] for n in nodes.values()) == [
        "(unknown)",
        "Sum",
        "_ * 2.0",
        "float32",
        "x: (3), float32",
    ]


def test_quotes_in_names_are_escaped():
    x = Variable(numpy.ones(1, numpy.float32), name='say "hi"\\')
    text = build_computational_graph(-x).dump()
    assert '\\"hi\\"' in text
    _, nodes, _ = parse_dot(text)
    assert 'say "hi"\\: (1), float32' in {n["label"] for n in nodes.values()}


def test_bad_arguments_are_reported():
    x = Variable(numpy.ones(1, numpy.float32))
    with pytest.raises(TypeError, match="outputs.*ndarray"):
        build_computational_graph(numpy.ones(1))
    with pytest.raises(TypeError, match="every element of outputs.*int"):
        build_computational_graph([x, 3])
    with pytest.raises(ValueError, match="remove_split=False"):
        build_computational_graph(x, remove_split=False)
    with pytest.raises(ValueError, match=r"rankdir.*\('TB', 'BT', 'LR', 'RL'\).*'XY'"):
        build_computational_graph(x, rankdir="XY")
    with pytest.raises(TypeError, match="variable_style.*'fancy'"):
        build_computational_graph(x, variable_style="fancy")
    with pytest.raises(NotImplementedError, match="format='dot'.*'png'"):
        build_computational_graph(x).dump("png")
