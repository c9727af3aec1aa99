"""The protobuf codec of the Chakra schema (the optional ``protobuf`` extra).

:func:`protobuf_classes` builds the message classes with ``google.protobuf`` from descriptors
written field by field with the official numbers and types, in a private descriptor pool so
that they never clash with another copy of the schema loaded in the same process;
:func:`to_plain` and :func:`from_plain` convert between its messages and the plain form the
pure-Python codec gives.
"""

from __future__ import annotations

from typing import Any

from ocsched._extras import install_hint
from ocsched.errors import InvalidInputError
from ocsched.io.traces._chakra_schema import ATTR_FIELDS, COLLECTIVE_TYPES, NODE_TYPES, _empty_node


def protobuf_available() -> bool:
    """Return True if ``google.protobuf`` can be imported (``pip install ocsched[traces]``)."""
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        return False
    return True


_CLASSES: dict[str, Any] = {}
_SCALAR_TYPES = {
    "double": 1,
    "float": 2,
    "int64": 3,
    "uint64": 4,
    "int32": 5,
    "fixed64": 6,
    "fixed32": 7,
    "bool": 8,
    "string": 9,
    "bytes": 12,
    "uint32": 13,
    "sfixed32": 15,
    "sfixed64": 16,
    "sint32": 17,
    "sint64": 18,
}


def protobuf_classes() -> dict[str, Any]:
    """Return the message classes (``Node``, ``GlobalMetadata``, ``AttributeProto``, ...) built with protobuf.

    The descriptors follow ``et_def.proto`` field by field (numbers, types, labels, the value
    oneof); they live in a private pool, so the official generated module can be loaded too.

    Raises
    ------
    InvalidInputError
        If ``protobuf`` is not installed (with the install hint).
    """
    if _CLASSES:
        return _CLASSES
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise InvalidInputError(
            f"the protobuf codec needs the `protobuf` package: {install_hint('traces')} "
            "(or use codec='python')"
        ) from None
    fd = descriptor_pb2.FileDescriptorProto(name="ocsched/chakra_et_def.proto", package="ChakraProtoMsg")
    fd.syntax = "proto3"
    label_opt, label_rep = 1, 3
    msg_type, enum_type = 11, 14

    def field(m: Any, name: str, number: int, ftype: int, label: int = label_opt, tname: str = "") -> Any:
        f = m.field.add(name=name, number=number, type=ftype, label=label)
        if tname:
            f.type_name = f".ChakraProtoMsg.{tname}"
        return f

    attr = fd.message_type.add(name="AttributeProto")
    field(attr, "name", 1, _SCALAR_TYPES["string"])
    field(attr, "doc_string", 2, _SCALAR_TYPES["string"])
    attr.oneof_decl.add(name="value")
    for number, (fname, scalar) in sorted(ATTR_FIELDS.items()):
        if fname.endswith("_list"):
            tname = scalar[0].upper() + scalar[1:] + "List"
            f = field(attr, fname, number, msg_type, tname=tname)
        else:
            f = field(attr, fname, number, _SCALAR_TYPES[scalar])
        f.oneof_index = 0
    for scalar in ("double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64"):
        lst = fd.message_type.add(name=scalar[0].upper() + scalar[1:] + "List")
        field(lst, "values", 1, _SCALAR_TYPES[scalar], label_rep)
    for scalar in ("fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"):
        lst = fd.message_type.add(name=scalar[0].upper() + scalar[1:] + "List")
        field(lst, "values", 1, _SCALAR_TYPES[scalar], label_rep)
    meta = fd.message_type.add(name="GlobalMetadata")
    field(meta, "version", 1, _SCALAR_TYPES["string"])
    field(meta, "attr", 2, msg_type, label_rep, "AttributeProto")
    for ename, values in (("NodeType", NODE_TYPES), ("CollectiveCommType", COLLECTIVE_TYPES)):
        enum = fd.enum_type.add(name=ename)
        for number, vname in sorted(values.items()):
            enum.value.add(name=vname, number=number)
    node = fd.message_type.add(name="Node")
    field(node, "id", 1, _SCALAR_TYPES["uint64"])
    field(node, "name", 2, _SCALAR_TYPES["string"])
    field(node, "type", 3, enum_type, tname="NodeType")
    field(node, "ctrl_deps", 4, _SCALAR_TYPES["uint64"], label_rep)
    field(node, "data_deps", 5, _SCALAR_TYPES["uint64"], label_rep)
    field(node, "start_time_micros", 6, _SCALAR_TYPES["uint64"])
    field(node, "duration_micros", 7, _SCALAR_TYPES["uint64"])
    field(node, "inputs", 8, msg_type, tname="IOInfo")
    field(node, "outputs", 9, msg_type, tname="IOInfo")
    field(node, "attr", 10, msg_type, label_rep, "AttributeProto")
    io_info = fd.message_type.add(name="IOInfo")
    for number, name in ((1, "values"), (2, "shapes"), (3, "types")):
        field(io_info, name, number, _SCALAR_TYPES["string"])
    tensor = fd.message_type.add(name="Tensor")
    for number, name in enumerate(("tensor_id", "storage_id", "offset", "num_elem", "elem_bytes"), start=1):
        field(tensor, name, number, _SCALAR_TYPES["uint64"])
    field(tensor, "device", 6, _SCALAR_TYPES["string"])

    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    for m in fd.message_type:
        _CLASSES[m.name] = message_factory.GetMessageClass(
            pool.FindMessageTypeByName(f"ChakraProtoMsg.{m.name}")
        )
    _CLASSES["FILE"] = pool.FindFileByName(fd.name)
    return _CLASSES


def _attr_plain(a: Any) -> tuple[str, str, Any]:
    kind = a.WhichOneof("value") or ""
    if not kind:
        return a.name, "", None
    value = getattr(a, kind)
    if kind.endswith("_list"):
        value = list(value.values)
    return a.name, kind, value


def to_plain(message: Any) -> dict[str, Any]:
    """The plain form of a protobuf ``Node`` or ``GlobalMetadata`` (as :func:`node_dict` gives)."""
    if message.DESCRIPTOR.name == "GlobalMetadata":
        return {"version": message.version, "attr": [_attr_plain(a) for a in message.attr]}
    node = _empty_node()
    node.update(
        id=message.id,
        name=message.name,
        type=int(message.type),
        ctrl_deps=list(message.ctrl_deps),
        data_deps=list(message.data_deps),
        start_time_micros=message.start_time_micros,
        duration_micros=message.duration_micros,
        inputs={k: getattr(message.inputs, k) for k in ("values", "shapes", "types")},
        outputs={k: getattr(message.outputs, k) for k in ("values", "shapes", "types")},
        attr=[_attr_plain(a) for a in message.attr],
    )
    return node


def from_plain(node: dict[str, Any]) -> Any:
    """A protobuf ``Node`` from its plain form (the writer's protobuf path)."""
    classes = protobuf_classes()
    msg = classes["Node"]()
    for key in ("id", "name", "type", "start_time_micros", "duration_micros"):
        if node.get(key):
            setattr(msg, key, node[key])
    msg.ctrl_deps.extend(node.get("ctrl_deps") or [])
    msg.data_deps.extend(node.get("data_deps") or [])
    for key in ("inputs", "outputs"):
        for k, v in (node.get(key) or {}).items():
            if v:
                setattr(getattr(msg, key), k, v)
    for name, kind, value in node.get("attr") or []:
        a = msg.attr.add(name=name)
        if kind.endswith("_list"):
            getattr(a, kind).values.extend(value)
        else:
            setattr(a, kind, value)
    return msg
