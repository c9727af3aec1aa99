"""Chakra ETs: the pure-Python codec, the protobuf codec and the official schema agree; the ASTRA-sim export.

The official schema is the generated ``et_def_pb2`` of the ``mlc-chakra`` package (installed by
``make setup`` with ``--no-deps``: its own dependency tree is not needed to read the schema).
"""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chakra.schema.protobuf import et_def_pb2 as official
from chakra.src.third_party.utils.protolib import decodeMessage, openFileRd
from hypothesis import given, settings
from hypothesis import strategies as st

import ocsched
from ocsched.errors import InvalidInputError
from ocsched.io.exports.astra_sim import read_astra_sim, write_astra_sim
from ocsched.io.traces import _chakra_codec as codec
from ocsched.io.traces import read_trace

DATA = Path(__file__).parents[1] / "data" / "traces"


def _official_node(plain: dict[str, Any]) -> Any:
    msg = official.Node()
    for key in ("id", "name", "type", "start_time_micros", "duration_micros"):
        if plain.get(key):
            setattr(msg, key, plain[key])
    msg.ctrl_deps.extend(plain.get("ctrl_deps") or [])
    msg.data_deps.extend(plain.get("data_deps") or [])
    for key in ("inputs", "outputs"):
        for k, v in (plain.get(key) or {}).items():
            if v:
                setattr(getattr(msg, key), k, v)
    for name, kind, value in plain.get("attr") or []:
        a = msg.attr.add(name=name)
        if kind.endswith("_list"):
            getattr(a, kind).values.extend(value)
        else:
            setattr(a, kind, value)
    return msg


def _repeated(field: Any) -> bool:
    # protobuf 7 dropped FieldDescriptor.label for is_repeated.
    return bool(field.is_repeated) if hasattr(field, "is_repeated") else field.label == 3


def test_descriptors_match_the_official_schema() -> None:
    mine = codec.protobuf_classes()
    for name, desc in official.DESCRIPTOR.message_types_by_name.items():
        if name not in mine:  # the official schema's storage messages: not read by ocsched
            assert name in {"StorageInfo", "FsOp", "PageOp", "BlockOp"}, name
            continue
        ours = mine[name].DESCRIPTOR
        for f in desc.fields:
            if name == "Node" and f.name == "storage":
                continue
            g = ours.fields_by_name[f.name]
            assert (g.number, g.type, _repeated(g)) == (f.number, f.type, _repeated(f)), (name, f.name)
            assert (g.containing_oneof is None) == (f.containing_oneof is None), (name, f.name)
    for enum in ("NodeType", "CollectiveCommType"):
        values = {v.name: v.number for v in official.DESCRIPTOR.enum_types_by_name[enum].values}
        table = codec.NODE_TYPES if enum == "NodeType" else codec.COLLECTIVE_TYPES
        assert {n: v for v, n in table.items() if n in values} == values


_f32 = st.floats(width=32, allow_nan=False)
_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "double": st.floats(allow_nan=False),
    "float": _f32.map(lambda x: struct.unpack("<f", struct.pack("<f", x))[0]),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**63), 2**63 - 1),
    "uint32": st.integers(0, 2**32 - 1),
    "uint64": st.integers(0, 2**64 - 1),
    "sint32": st.integers(-(2**31), 2**31 - 1),
    "sint64": st.integers(-(2**63), 2**63 - 1),
    "fixed32": st.integers(0, 2**32 - 1),
    "fixed64": st.integers(0, 2**64 - 1),
    "sfixed32": st.integers(-(2**31), 2**31 - 1),
    "sfixed64": st.integers(-(2**63), 2**63 - 1),
    "bool": st.booleans(),
    "string": st.text(max_size=12),
    "bytes": st.binary(max_size=12),
}


@st.composite
def _attrs(draw: st.DrawFn) -> tuple[str, str, Any]:
    fname, scalar = draw(st.sampled_from(sorted(codec.ATTR_FIELDS.values())))
    value = draw(st.lists(_VALUES[scalar], max_size=5)) if fname.endswith("_list") else draw(_VALUES[scalar])
    return draw(st.text(max_size=8)), fname, value


_nodes = st.fixed_dictionaries(
    {
        "id": st.integers(0, 2**64 - 1),
        "name": st.text(max_size=20),
        "type": st.sampled_from(sorted(codec.NODE_TYPES)),
        "ctrl_deps": st.lists(st.integers(0, 2**64 - 1), max_size=4),
        "data_deps": st.lists(st.integers(0, 2**64 - 1), max_size=4),
        "start_time_micros": st.integers(0, 2**64 - 1),
        "duration_micros": st.integers(0, 2**64 - 1),
        "inputs": st.fixed_dictionaries({k: st.text(max_size=6) for k in ("values", "shapes", "types")}),
        "outputs": st.fixed_dictionaries({k: st.text(max_size=6) for k in ("values", "shapes", "types")}),
        "attr": st.lists(_attrs(), max_size=5),
    }
)


@settings(max_examples=150, deadline=None)
@given(node=_nodes)
def test_three_codecs_agree_on_random_nodes(node: dict[str, Any]) -> None:
    mine = codec.encode_node(node)
    off = _official_node(node)
    assert off.SerializeToString() == mine == codec.from_plain(node).SerializeToString()
    parsed = official.Node()
    parsed.ParseFromString(mine)
    ours = codec.protobuf_classes()["Node"]()
    ours.ParseFromString(mine)
    assert codec.node_dict(mine) == codec.to_plain(parsed) == codec.to_plain(ours)


def test_python_decoder_accepts_unpacked_repeated_fields_and_skips_unknown_ones() -> None:
    out = bytearray()
    codec._put_scalar(out, 5, "uint64", 3)  # data_deps, one unpacked value
    codec._put_scalar(out, 5, "uint64", 4)
    codec._put_scalar(out, 99, "string", "future field")
    codec._put_scalar(out, 1, "uint64", 7)
    node = codec.node_dict(bytes(out))
    assert (node["id"], node["data_deps"]) == (7, [3, 4])
    with pytest.raises(codec.WireError):
        codec.node_dict(b"\x08")  # truncated varint


@pytest.mark.parametrize(
    "folder",
    ["astra-sim/all_reduce-4npus", "astra-sim/all_to_all-4npus", "astra-sim/custom-ring-allreduce-8npus"],
)
def test_public_files_decode_identically(folder: str) -> None:
    for path in sorted((DATA / folder).iterdir()):
        with codec_stream(path) as f:
            messages = list(codec.iter_messages(f))
        assert codec.metadata_dict(messages[0]) == codec.to_plain(
            _parse(official.GlobalMetadata, messages[0])
        )
        for raw in messages[1:]:
            assert codec.node_dict(raw) == codec.to_plain(_parse(official.Node, raw))
            assert codec.encode_node(codec.node_dict(raw)) == raw


def codec_stream(path: Path) -> Any:
    from ocsched.io.traces._stream import open_binary

    return open_binary(path)


def _parse(cls: Any, raw: bytes) -> Any:
    m = cls()
    m.ParseFromString(raw)
    return m


@pytest.mark.parametrize("name", ["python", "protobuf"])
def test_chakra_reader_codecs_give_the_same_iteration(name: str) -> None:
    path = DATA / "astra-sim" / "custom-ring-allreduce-8npus"
    assert (
        read_trace(path, link_rate=1.0, codec=name).to_json()
        == read_trace(path, link_rate=1.0, codec="python").to_json()
    )


# --------------------------------------------------------------------------------------------
# The ASTRA-sim export
# --------------------------------------------------------------------------------------------


def _random_demand(rng: np.random.Generator, n: int) -> np.ndarray:
    d = rng.integers(0, 6, (n, n)).astype(float) * (rng.random((n, n)) < 0.6)
    np.fill_diagonal(d, 0)
    d[0, 1] = max(d[0, 1], 1.0)
    return d


def _schedules(seed: int) -> list[tuple[Any, Any]]:
    rng = np.random.default_rng(seed)
    d = _random_demand(rng, 5)
    it = ocsched.Iteration([ocsched.Phase(d), ocsched.Phase(_random_demand(rng, 5), gap_before=0.7)])
    fab = ocsched.Fabric.from_deltas([0.3, 1.1], rates=[1.0, 2.5])
    return [
        (ocsched.schedule(d, switches=2, delta=0.25), d),
        (ocsched.schedule(d, fabric=fab, algorithm="spectra-pack"), d),
        (ocsched.schedule_iteration(it, switches=3, delta=0.2), it),
        (ocsched.schedule_iteration(it, fabric=fab), it),
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_export_read_validate_round_trip(tmp_path: Path, seed: int) -> None:
    for k, (sched, demand) in enumerate(_schedules(seed)):
        folder = tmp_path / f"s{k}"
        files = write_astra_sim(sched, folder, link_rate="400Gbps", time_unit="us")
        back = read_astra_sim(folder)
        assert type(back) is type(sched)
        assert back.to_json() == sched.to_json()
        if isinstance(back, ocsched.Schedule):
            assert ocsched.validate(back, demand, fabric=back.on_fabric()).ok
        else:
            assert ocsched.validate(back, demand).ok
        assert [f.name for f in files][-2:] == ["system.json", "ocsched.json"]


def test_export_decodes_with_the_official_schema_and_its_sends_carry_the_served_bytes(tmp_path: Path) -> None:
    sched, _ = _schedules(3)[1]  # rates 1 and 2.5: served = rate x held time
    write_astra_sim(sched, tmp_path, link_rate=8.0)  # 8 bytes/s, times in s: 1 time unit = 8 bytes
    table = ocsched.io.circuit_table(sched)
    sent = np.zeros((sched.ports, sched.ports))
    for r in range(sched.ports):
        fh = openFileRd(str(tmp_path / f"ocsched.{r}.et"))
        meta = official.GlobalMetadata()
        assert decodeMessage(fh, meta)
        node = official.Node()
        while decodeMessage(fh, node):
            attrs = {a.name: a for a in node.attr}
            if node.type == official.COMM_SEND_NODE:
                sent[r, attrs["comm_dst"].int32_val] += attrs["comm_size"].int64_val
            elif node.type == official.COMP_NODE:
                assert node.duration_micros >= 0
            node = official.Node()
        fh.close()
    want = np.zeros_like(sent)
    np.add.at(want, (table["src"], table["dst"]), table["served"] * 8.0)
    np.testing.assert_allclose(sent, np.rint(want), atol=len(table["src"]))  # rounding to whole bytes
    system = json.loads((tmp_path / "system.json").read_text())
    assert system["all-to-all-implementation-custom"] == [str(tmp_path / "ocsched")]


def test_reconfiguration_comp_nodes_round_up_to_whole_microseconds(tmp_path: Path) -> None:
    sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=2.5)
    write_astra_sim(sched, tmp_path, link_rate=1e9, time_unit="us")
    with (tmp_path / "ocsched.0.et").open("rb") as f:
        nodes = [codec.node_dict(m) for m in list(codec.iter_messages(f))[1:]]
    comp = [n for n in nodes if n["type"] == 4]
    assert comp[0]["duration_micros"] == 3  # 2.5 us of dark time, never shorter in the simulator


def test_reader_refuses_a_send_without_its_receive(tmp_path: Path) -> None:
    sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    write_astra_sim(sched, tmp_path, link_rate=1e9)
    path = tmp_path / "ocsched.1.et"
    with path.open("rb") as f:
        messages = list(codec.iter_messages(f))
    kept = [m for m in messages[1:] if codec.node_dict(m)["type"] != 6]
    buf = io.BytesIO()
    for m in [messages[0], *kept]:
        codec.write_message(buf, m)
    path.write_bytes(buf.getvalue())
    with pytest.raises(InvalidInputError, match="send and receive of tag 0 from rank 0 do not match"):
        read_astra_sim(tmp_path)


def test_export_refuses_bad_arguments(tmp_path: Path) -> None:
    sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    with pytest.raises(InvalidInputError, match="`collective` must be one of"):
        write_astra_sim(sched, tmp_path, link_rate=1e9, collective="broadcast")
    with pytest.raises(InvalidInputError, match="`link_rate`"):
        write_astra_sim(sched, tmp_path, link_rate="fast")
    write_astra_sim(sched, tmp_path, link_rate=1e9)
    with pytest.raises(InvalidInputError, match="already exists"):
        write_astra_sim(sched, tmp_path, link_rate=1e9)


def test_exported_files_read_back_as_a_trace(tmp_path: Path) -> None:
    # The export is a Chakra trace too: importing it gives what the circuits serve, in bytes.
    sched, _ = _schedules(4)[0]
    write_astra_sim(sched, tmp_path, link_rate=1000.0)
    it = read_trace(tmp_path, link_rate=1000.0, gaps="none")
    table = ocsched.io.circuit_table(sched)
    served = np.zeros((sched.ports, sched.ports))
    np.add.at(served, (table["src"], table["dst"]), table["served"])
    np.testing.assert_allclose(
        sum(p.demand.to_dense() for p in it.phases), served, atol=len(table["src"]) / 1000
    )
