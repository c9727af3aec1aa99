"""The pure-Python codec of the Chakra wire format, and the stream framing.

Decoding (:func:`node_dict`, :func:`metadata_dict`: varints, zigzag, fixed32/64, packed and
unpacked repeated fields; unknown fields are skipped, as protobuf does), encoding
(:func:`encode_node`, :func:`encode_metadata`, proto3 defaults left out) and the
length-delimited framing of an ET stream (:func:`write_message`, :func:`iter_messages`),
without ``google.protobuf``. Malformed input raises :class:`WireError`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import IO, Any

from ocsched.io.traces._chakra_schema import _ATTR_NUMBER, ATTR_FIELDS, _empty_node

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
