"""The Chakra execution-trace schema: its enums, its attribute fields, a node's plain form.

The tables follow ``mlcommons/chakra : schema/protobuf/et_def.proto`` (package
``ChakraProtoMsg``) value by value and field by field; both codecs of
:mod:`~ocsched.io.traces._chakra_codec` (the pure-Python one in
:mod:`~ocsched.io.traces._chakra_wire`, the protobuf one in
:mod:`~ocsched.io.traces._chakra_protobuf`) read them, and build a node's plain form from
:func:`_empty_node`.
"""

from __future__ import annotations

from typing import Any

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
