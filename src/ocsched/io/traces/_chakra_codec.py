"""The Chakra execution-trace wire format: two codecs of one schema, and the stream framing.

A Chakra ET file (``<prefix>.<rank>.et``) is a sequence of length-delimited protobuf messages:
a varint32 byte count, then that many bytes; the first message is a ``GlobalMetadata``, every
later one a ``Node`` (schema ``mlcommons/chakra : schema/protobuf/et_def.proto``, package
``ChakraProtoMsg``). Both codecs turn a message into the same plain Python form (this module
gathers them: the schema's tables are :mod:`._chakra_schema`'s, the pure-Python codec and the
framing :mod:`._chakra_wire`'s, the protobuf codec :mod:`._chakra_protobuf`'s):

- :func:`node_dict` / :func:`metadata_dict` decode with a small pure-Python reader of the wire
  format (varints, zigzag, fixed32/64, packed and unpacked repeated fields; unknown fields are
  skipped, as protobuf does);
- :func:`protobuf_classes` builds the message classes with ``google.protobuf`` from descriptors
  written field by field with the official numbers and types (the ``protobuf`` package is
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

from ocsched.io.traces._chakra_protobuf import from_plain as from_plain
from ocsched.io.traces._chakra_protobuf import protobuf_available, protobuf_classes, to_plain
from ocsched.io.traces._chakra_schema import ATTR_FIELDS, COLLECTIVE_TYPES, NODE_TYPES
from ocsched.io.traces._chakra_wire import MAX_MESSAGE_BYTES as MAX_MESSAGE_BYTES
from ocsched.io.traces._chakra_wire import WireError as WireError
from ocsched.io.traces._chakra_wire import _put_scalar as _put_scalar
from ocsched.io.traces._chakra_wire import (
    encode_metadata,
    encode_node,
    iter_messages,
    metadata_dict,
    node_dict,
    write_message,
)

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
