"""Keep a weight-only int8 model's embedding table int8 in memory.

A weight-only quantized ONNX model stores each table as int8 with a float scale and
dequantizes it in the graph: `Gather(Mul(Cast(table_q), scale), ids)`. ONNX Runtime folds
that constant subgraph at load, so the word table of all-MiniLM-L6-v2 (30,522 x 384) becomes
47 MB of float32 (and loading it costs as much again while the two copies coexist). Gathering
first and dequantizing only the rows looked up, `Mul(Cast(Gather(table_q, ids)),
Gather(scale, ids))`, computes the same numbers (the same float operations on the same rows)
from the int8 table.

The rewrite works on the serialised model with a minimal description of the few ONNX message
fields it reads (every other field passes through untouched), so it needs no `onnx` package.
A model without the pattern is returned as it was.
"""

from __future__ import annotations

from functools import cache
from typing import Any

_INT8 = 3  # TensorProto.INT8
_FLOAT = 1  # TensorProto.FLOAT
_ATTRIBUTE_INT = 2  # AttributeProto.INT

# field name, number, label (1 optional, 3 repeated), type (9 string, 3 int64, 5 int32, 11 message)
_MESSAGES: dict[str, list[tuple[str, int, int, int, str | None]]] = {
    "Model": [("graph", 7, 1, 11, "Graph")],
    "Graph": [("node", 1, 3, 11, "Node"), ("initializer", 5, 3, 11, "Tensor")],
    "Node": [
        ("input", 1, 3, 9, None),
        ("output", 2, 3, 9, None),
        ("name", 3, 1, 9, None),
        ("op_type", 4, 1, 9, None),
        ("attribute", 5, 3, 11, "Attribute"),
    ],
    "Attribute": [("name", 1, 1, 9, None), ("i", 3, 1, 3, None), ("type", 20, 1, 5, None)],
    "Tensor": [("dims", 1, 3, 3, None), ("data_type", 2, 1, 5, None), ("name", 8, 1, 9, None)],
}


@cache
def _classes() -> dict[str, Any]:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    package = "capy_onnx_subset"
    file = descriptor_pb2.FileDescriptorProto(name=f"{package}.proto", package=package)
    file.syntax = "proto2"
    for message, fields in _MESSAGES.items():
        described = file.message_type.add(name=message)
        for name, number, label, kind, type_name in fields:
            field = described.field.add(name=name, number=number, label=label, type=kind)
            if type_name:
                field.type_name = f".{package}.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))
        for name in _MESSAGES
    }


def gather_before_dequantize(model: bytes) -> bytes:
    """The model with every int8 table lookup gathering int8 rows first (see the module)."""
    classes = _classes()
    parsed = classes["Model"]()
    parsed.ParseFromString(model)
    graph = parsed.graph
    int8 = {tensor.name for tensor in graph.initializer if tensor.data_type == _INT8}
    initializers = {tensor.name for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    users: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            users[name] = users.get(name, 0) + 1
    rebuilt, dropped, changed = [], set(), False
    for node in graph.node:
        found = _dequantized_table(node, producer, int8, initializers, users)
        if found is None:
            rebuilt.append(node)
            continue
        cast, mul, table_q, scale = found
        dropped.update((id(cast), id(mul)))
        rebuilt.extend(_gather_rows(classes, node, table_q, scale))
        changed = True
    if not changed:
        return model
    nodes = [node for node in rebuilt if id(node) not in dropped]
    copies = [_copy(classes["Node"], node) for node in nodes]
    del graph.node[:]
    graph.node.extend(copies)
    return parsed.SerializeToString()


def _dequantized_table(
    node: Any, producer: dict, int8: set[str], initializers: set[str], users: dict[str, int]
) -> tuple[Any, Any, str, str] | None:
    """(cast, mul, int8 table, scale) when `node` gathers from `Mul(Cast(int8), scale)` that
    nothing else reads; None otherwise."""
    if node.op_type != "Gather" or len(node.input) != 2 or _axis(node) != 0:
        return None
    mul = producer.get(node.input[0])
    if mul is None or mul.op_type != "Mul" or users.get(node.input[0]) != 1:
        return None
    cast = producer.get(mul.input[0])
    scale = mul.input[1]
    if cast is None or cast.op_type != "Cast" or scale not in initializers:
        return None
    if cast.input[0] not in int8 or users.get(mul.input[0]) != 1:
        return None
    return cast, mul, cast.input[0], scale


def _axis(node: Any) -> int:
    for attribute in node.attribute:
        if attribute.name == "axis":
            return attribute.i
    return 0


def _gather_rows(classes: dict[str, Any], gather: Any, table_q: str, scale: str) -> list[Any]:
    """Gather the int8 rows and their scales, then Cast and Mul into the old output."""
    node_class, ids, (output,) = classes["Node"], gather.input[1], gather.output
    rows_q, rows_scale, rows_f = f"{output}_rows_q", f"{output}_rows_scale", f"{output}_rows_f"
    nodes = [
        node_class(name=f"{gather.name}_rows_q", op_type="Gather", input=[table_q, ids]),
        node_class(name=f"{gather.name}_rows_scale", op_type="Gather", input=[scale, ids]),
        node_class(name=f"{gather.name}_rows_f", op_type="Cast", input=[rows_q]),
        node_class(name=f"{gather.name}_rows", op_type="Mul", input=[rows_f, rows_scale]),
    ]
    for node, out in zip(nodes, (rows_q, rows_scale, rows_f, output), strict=True):
        node.output.append(out)
    nodes[2].attribute.add(name="to", i=_FLOAT, type=_ATTRIBUTE_INT)
    return nodes


def _copy(node_class: Any, node: Any) -> Any:
    copy = node_class()
    copy.CopyFrom(node)
    return copy
