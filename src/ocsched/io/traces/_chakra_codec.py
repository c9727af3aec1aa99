"""The Chakra execution-trace wire format: two codecs of one schema, and the stream framing.

A Chakra ET file (``<prefix>.<rank>.et``) is a sequence of length-delimited protobuf messages:
a varint32 byte count, then that many bytes; the first message is a ``GlobalMetadata``, every
later one a ``Node`` (schema ``mlcommons/chakra : schema/protobuf/et_def.proto``, package
``ChakraProtoMsg``). Both codecs here turn a message into the same plain Python form:

- :func:`node_dict` / :func:`metadata_dict` decode with a small pure-Python reader of the wire
  format (varints, zigzag, fixed32/64, packed and unpacked repeated fields; unknown fields are
  skipped, as protobuf does);
- :func:`protobuf_classes` builds the message classes with ``google.protobuf`` from descriptors
  written here field by field with the official numbers and types (the ``protobuf`` package is
  an optional extra, ``pip install ocsched[traces]``), in a private descriptor pool so that they
  never clash with another copy of the schema loaded in the same process.

The plain form of a node: ``{"id", "name", "type", "ctrl_deps", "data_deps",
"start_time_micros", "duration_micros", "inputs", "outputs", "attr"}``, with ``inputs`` and
``outputs`` as ``{"values", "shapes", "types"}`` strings and ``attr`` a list of ``(name, kind,
value)`` where ``kind`` is the oneof field set (``"int64_val"``, ``"string_list"``, ...) and a
list kind's value is a Python list. The tests check both codecs against each other and against
the official generated module.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import IO, Any

from ocsched._extras import install_hint
from ocsched.errors import InvalidInputError

__all__ = [
    "ATTR_FIELDS",
    "COLLECTIVE_TYPES",
    "NODE_TYPES",
    "encode_metadata",
    "encode_node",
    "iter_messages",
    "metadata_dict",
    "node_dict",
    "protobuf_available",
    "protobuf_classes",
    "to_plain",
    "write_message",
]

#: ``NodeType`` of the schema (value -> name).
NODE_TYPES: dict[int, str] = {
    0: "INVALID_NODE",
    1: "METADATA_NODE",
    2: "MEM_LOAD_NODE",
    3: "MEM_STORE_NODE",
    4: "COMP_NODE",
    5: "COMM_SEND_NODE",
    6: "COMM_RECV_NODE",
    7: "COMM_COLL_NODE",
    8: "STORAGE_NODE",
    9: "BATCH_NODE",
    10: "CHECKPOINT_NODE",
}
#: ``CollectiveCommType`` of the schema (value -> name).
COLLECTIVE_TYPES: dict[int, str] = {
    0: "ALL_REDUCE",
    1: "REDUCE",
    2: "ALL_GATHER",
    3: "GATHER",
    4: "SCATTER",
    5: "BROADCAST",
    6: "ALL_TO_ALL",
    7: "REDUCE_SCATTER",
    8: "REDUCE_SCATTER_BLOCK",
    9: "BARRIER",
}

#: ``AttributeProto``'s value oneof: field number -> (name, scalar type); list kinds end in ``_list``.
ATTR_FIELDS: dict[int, tuple[str, str]] = {
    3: ("double_val", "double"),
    4: ("double_list", "double"),
    5: ("float_val", "float"),
    6: ("float_list", "float"),
    7: ("int32_val", "int32"),
    8: ("int32_list", "int32"),
    9: ("int64_val", "int64"),
    10: ("int64_list", "int64"),
    11: ("uint32_val", "uint32"),
    12: ("uint32_list", "uint32"),
    13: ("uint64_val", "uint64"),
    14: ("uint64_list", "uint64"),
    15: ("sint32_val", "sint32"),
    16: ("sint32_list", "sint32"),
    17: ("sint64_val", "sint64"),
    18: ("sint64_list", "sint64"),
    19: ("fixed32_val", "fixed32"),
    20: ("fixed32_list", "fixed32"),
    21: ("fixed64_val", "fixed64"),
    22: ("fixed64_list", "fixed64"),
    23: ("sfixed32_val", "sfixed32"),
    24: ("sfixed32_list", "sfixed32"),
    25: ("sfixed64_val", "sfixed64"),
    26: ("sfixed64_list", "sfixed64"),
    27: ("bool_val", "bool"),
    28: ("bool_list", "bool"),
    29: ("string_val", "string"),
    30: ("string_list", "string"),
    31: ("bytes_val", "bytes"),
    32: ("bytes_list", "bytes"),
}
_ATTR_NUMBER = {name: number for number, (name, _) in ATTR_FIELDS.items()}
_VARINT_TYPES = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool"}
_FIXED = {"double": "<d", "float": "<f", "fixed32": "<I", "fixed64": "<Q", "sfixed32": "<i", "sfixed64": "<q"}
#: Largest message a stream may hold (a Chakra node is a few kB; this bounds a corrupt length).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class WireError(ValueError):
    """A message that is not valid protobuf wire format (the caller names the file)."""


# ---------------------------------------------------------------------------------------------
# The wire format, decoding
# ---------------------------------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise WireError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError("varint longer than 10 bytes")


def _fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(field number, wire type, raw value)``: an int for varints, bytes otherwise."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if number == 0:
            raise WireError("field number 0")
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise WireError(f"unsupported wire type {wire}")
        if pos > end:
            raise WireError("truncated field")
        yield number, wire, value


def _signed(value: int, bits: int) -> int:
    """A varint read as a two's-complement signed integer of ``bits`` bits (int32 sign-extends to 64)."""
    value &= (1 << 64) - 1
    if bits == 32:
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value & (1 << 31) else value
    return value - (1 << 64) if value & (1 << 63) else value


def _scalar(kind: str, wire: int, raw: Any) -> Any:
    if kind in _FIXED:
        size = 8 if _FIXED[kind][1] in "dQq" else 4
        if wire != (1 if size == 8 else 5) or len(raw) != size:
            raise WireError(f"{kind} field with wire type {wire}")
        return struct.unpack(_FIXED[kind], raw)[0]
    if kind in _VARINT_TYPES:
        if wire != 0:
            raise WireError(f"{kind} field with wire type {wire}")
        if kind == "int32":
            return _signed(raw, 32)
        if kind == "int64":
            return _signed(raw, 64)
        if kind == "uint32":
            return raw & 0xFFFFFFFF
        if kind == "uint64":
            return raw & ((1 << 64) - 1)
        if kind in ("sint32", "sint64"):
            return (raw >> 1) ^ -(raw & 1)
        return bool(raw)
    if wire != 2:
        raise WireError(f"{kind} field with wire type {wire}")
    if kind == "string":
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError("a string field is not UTF-8") from None
    return bytes(raw)


def _repeated(kind: str, wire: int, raw: Any) -> list[Any]:
    """One occurrence of a repeated scalar field: packed (a run of values) or one value."""
    if wire == 2 and kind not in ("string", "bytes"):
        out: list[Any] = []
        if kind in _FIXED:
            fmt = _FIXED[kind]
            size = struct.calcsize(fmt)
            if len(raw) % size:
                raise WireError(f"packed {kind} run of {len(raw)} bytes")
            return [v for (v,) in struct.iter_unpack(fmt, raw)]
        pos = 0
        while pos < len(raw):
            v, pos = _varint(raw, pos)
            out.append(_scalar(kind, 0, v))
        return out
    return [_scalar(kind, wire, raw)]


def _list_message(kind: str, raw: bytes) -> list[Any]:
    """``DoubleList`` and its siblings: ``repeated <kind> values = 1``."""
    out: list[Any] = []
    for number, wire, value in _fields(raw):
        if number == 1:
            out.extend(_repeated(kind, wire, value))
    return out


def _attribute(raw: bytes) -> tuple[str, str, Any]:
    name, kind, value = "", "", None
    for number, wire, v in _fields(raw):
        if number == 1:
            name = _scalar("string", wire, v)
        elif number in ATTR_FIELDS:
            fname, scalar = ATTR_FIELDS[number]
            if wire != 2 and fname.endswith("_list"):
                raise WireError(f"attribute list {fname} with wire type {wire}")
            # A oneof keeps the last member set, as protobuf parsers do.
            kind = fname
            value = _list_message(scalar, v) if fname.endswith("_list") else _scalar(scalar, wire, v)
    return name, kind, value


def _io_info(raw: bytes) -> dict[str, str]:
    out = {"values": "", "shapes": "", "types": ""}
    keys = {1: "values", 2: "shapes", 3: "types"}
    for number, wire, v in _fields(raw):
        if number in keys:
            out[keys[number]] = _scalar("string", wire, v)
    return out


def _empty_node() -> dict[str, Any]:
    return {
        "id": 0,
        "name": "",
        "type": 0,
        "ctrl_deps": [],
        "data_deps": [],
        "start_time_micros": 0,
        "duration_micros": 0,
        "inputs": {"values": "", "shapes": "", "types": ""},
        "outputs": {"values": "", "shapes": "", "types": ""},
        "attr": [],
    }


def node_dict(raw: bytes) -> dict[str, Any]:
    """Decode a ``Node`` message with the pure-Python reader (unknown fields skipped).

    >>> node_dict(encode_node({"id": 7, "name": "x", "type": 4, "duration_micros": 3}))["duration_micros"]
    3
    """
    node = _empty_node()
    for number, wire, v in _fields(raw):
        if number == 1:
            node["id"] = _scalar("uint64", wire, v)
        elif number == 2:
            node["name"] = _scalar("string", wire, v)
        elif number == 3:
            node["type"] = _signed(_scalar("uint64", wire, v), 32)
        elif number == 4:
            node["ctrl_deps"].extend(_repeated("uint64", wire, v))
        elif number == 5:
            node["data_deps"].extend(_repeated("uint64", wire, v))
        elif number == 6:
            node["start_time_micros"] = _scalar("uint64", wire, v)
        elif number == 7:
            node["duration_micros"] = _scalar("uint64", wire, v)
        elif number in (8, 9):
            if wire != 2:
                raise WireError(f"IOInfo field with wire type {wire}")
            node["inputs" if number == 8 else "outputs"] = _io_info(v)
        elif number == 10:
            if wire != 2:
                raise WireError(f"attribute field with wire type {wire}")
            node["attr"].append(_attribute(v))
    return node


def metadata_dict(raw: bytes) -> dict[str, Any]:
    """Decode a ``GlobalMetadata`` message: ``{"version", "attr"}``."""
    out: dict[str, Any] = {"version": "", "attr": []}
    for number, wire, v in _fields(raw):
        if number == 1:
            out["version"] = _scalar("string", wire, v)
        elif number == 2:
            if wire != 2:
                raise WireError(f"attribute field with wire type {wire}")
            out["attr"].append(_attribute(v))
    return out


# ---------------------------------------------------------------------------------------------
# The wire format, encoding
# ---------------------------------------------------------------------------------------------


def _put_varint(out: bytearray, value: int) -> None:
    value &= (1 << 64) - 1  # negative int32/int64 are written as 10-byte two's complement
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _put_key(out: bytearray, number: int, wire: int) -> None:
    _put_varint(out, (number << 3) | wire)


def _put_bytes(out: bytearray, number: int, data: bytes) -> None:
    _put_key(out, number, 2)
    _put_varint(out, len(data))
    out += data


def _scalar_bytes(kind: str, value: Any) -> tuple[int, bytes]:
    """``(wire type, payload)`` of one scalar value (the payload of a varint is the varint)."""
    if kind in _FIXED:
        fmt = _FIXED[kind]
        return (1 if struct.calcsize(fmt) == 8 else 5), struct.pack(fmt, value)
    if kind in _VARINT_TYPES:
        v = int(value)
        if kind in ("sint32", "sint64"):
            v = (v << 1) ^ (v >> 63)
        buf = bytearray()
        _put_varint(buf, v)
        return 0, bytes(buf)
    data = value.encode("utf-8") if kind == "string" else bytes(value)
    return 2, data


def _put_scalar(out: bytearray, number: int, kind: str, value: Any) -> None:
    wire, payload = _scalar_bytes(kind, value)
    if wire == 2:
        _put_bytes(out, number, payload)
    else:
        _put_key(out, number, wire)
        out += payload


def _encode_attribute(name: str, kind: str, value: Any) -> bytes:
    out = bytearray()
    if name:
        _put_scalar(out, 1, "string", name)
    number = _ATTR_NUMBER.get(kind)
    if number is None:
        raise ValueError(f"unknown attribute kind {kind!r}")
    scalar = ATTR_FIELDS[number][1]
    if kind.endswith("_list"):
        inner = bytearray()
        values = list(value)
        if scalar in ("string", "bytes"):
            for v in values:
                _put_scalar(inner, 1, scalar, v)
        elif values:  # proto3 packs repeated scalars
            run = b"".join(_scalar_bytes(scalar, v)[1] for v in values)
            _put_bytes(inner, 1, run)
        _put_bytes(out, number, bytes(inner))
    else:
        _put_scalar(out, number, scalar, value)
    return bytes(out)


def _encode_io(info: dict[str, str]) -> bytes:
    out = bytearray()
    for number, key in ((1, "values"), (2, "shapes"), (3, "types")):
        if info.get(key):
            _put_scalar(out, number, "string", info[key])
    return bytes(out)


def encode_node(node: dict[str, Any]) -> bytes:
    """Encode a node's plain form (missing keys take proto3 defaults, which are not written)."""
    out = bytearray()
    if node.get("id"):
        _put_scalar(out, 1, "uint64", node["id"])
    if node.get("name"):
        _put_scalar(out, 2, "string", node["name"])
    if node.get("type"):
        _put_scalar(out, 3, "int32", node["type"])
    for number, key in ((4, "ctrl_deps"), (5, "data_deps")):
        deps = node.get(key) or []
        if deps:
            _put_bytes(out, number, b"".join(_scalar_bytes("uint64", d)[1] for d in deps))
    for number, key in ((6, "start_time_micros"), (7, "duration_micros")):
        if node.get(key):
            _put_scalar(out, number, "uint64", node[key])
    for number, key in ((8, "inputs"), (9, "outputs")):
        info = node.get(key)
        if info and any(info.values()):
            _put_bytes(out, number, _encode_io(info))
    for name, kind, value in node.get("attr") or []:
        _put_bytes(out, 10, _encode_attribute(name, kind, value))
    return bytes(out)


def encode_metadata(version: str, attr: list[tuple[str, str, Any]] | None = None) -> bytes:
    """Encode a ``GlobalMetadata`` message."""
    out = bytearray()
    if version:
        _put_scalar(out, 1, "string", version)
    for name, kind, value in attr or []:
        _put_bytes(out, 2, _encode_attribute(name, kind, value))
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# Framing: varint32 length + message
# ---------------------------------------------------------------------------------------------


def write_message(out: IO[bytes], data: bytes) -> None:
    """Write one length-delimited message (what Chakra's ``encodeMessage`` writes)."""
    head = bytearray()
    _put_varint(head, len(data))
    out.write(bytes(head))
    out.write(data)


def iter_messages(stream: IO[bytes]) -> Iterator[bytes]:
    """Yield the messages of a length-delimited stream, one at a time (bounded memory).

    Raises
    ------
    WireError
        On a truncated length or message, or a length above :data:`MAX_MESSAGE_BYTES`.
    """
    while True:
        size = shift = 0
        first = True
        while True:
            b = stream.read(1)
            if not b:
                if first:
                    return
                raise WireError("truncated message length at the end of the stream")
            first = False
            size |= (b[0] & 0x7F) << shift
            if not b[0] & 0x80:
                break
            shift += 7
            if shift >= 35:
                raise WireError("message length longer than a varint32")
        if size > MAX_MESSAGE_BYTES:
            raise WireError(f"message of {size} bytes, above the limit of {MAX_MESSAGE_BYTES}")
        data = stream.read(size)
        if len(data) != size:
            raise WireError(f"truncated message: {len(data)} of {size} bytes")
        yield data


# ---------------------------------------------------------------------------------------------
# The protobuf codec (optional extra)
# ---------------------------------------------------------------------------------------------


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
