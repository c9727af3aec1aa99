"""The astra-sim export decodes with the official Chakra protobuf schema and reads back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ocsched import io, schedule, validate
from ocsched.fabric import Fabric

pb = pytest.importorskip("chakra.schema.protobuf.et_def_pb2")


def _decode(path: Path) -> tuple[object, list[object]]:
    """Length-delimited messages (what Chakra's decodeMessage reads), with the official classes."""
    from google.protobuf.internal.decoder import _DecodeVarint32  # type: ignore[attr-defined]

    data = path.read_bytes()
    pos, msgs = 0, []
    while pos < len(data):
        size, pos = _DecodeVarint32(data, pos)
        msgs.append(data[pos : pos + size])
        pos += size
    meta = pb.GlobalMetadata()
    meta.ParseFromString(msgs[0])
    nodes = []
    for raw in msgs[1:]:
        node = pb.Node()
        node.ParseFromString(raw)
        nodes.append(node)
    return meta, nodes


def test_official_schema_decodes_sends_receives_and_delays(tmp_path: Path) -> None:
    d = np.array([[0, 3.0, 1.0], [1.0, 0, 2.0], [2.0, 2.0, 0]])
    fab = Fabric.from_deltas([0.5, 0.25], rates=[2.0, 1.0])
    sched = schedule(d, fabric=fab)
    rate = 1e9  # B/s; times in us: 1 time unit = 1 us = 1000 bytes
    io.export(sched, format="astra-sim", path=tmp_path / "et", link_rate="8Gbps", time_unit="us")
    table = io.circuit_table(sched)
    sizes: dict[tuple[int, int], int] = {}
    for r in range(sched.ports):
        meta, nodes = _decode(tmp_path / "et" / f"ocsched.{r}.et")
        assert meta.version == "0.0.4"
        seen: set[int] = set()
        for node in nodes:
            assert node.id not in seen and set(node.data_deps) <= seen  # ids in dependency order
            seen.add(node.id)
            attrs = {a.name: a for a in node.attr}
            if node.type == pb.COMM_SEND_NODE:
                sizes[(r, attrs["comm_dst"].int32_val)] = (
                    sizes.get((r, attrs["comm_dst"].int32_val), 0) + attrs["comm_size"].int64_val
                )
                assert attrs["comm_tag"].int32_val >= 0
            elif node.type == pb.COMM_RECV_NODE:
                assert "comm_src" in attrs
            else:
                assert node.type == pb.COMP_NODE and node.duration_micros > 0
        assert any(n.name == "reconfigure" and n.duration_micros == 1 for n in nodes)  # 0.5 us -> 1 us
    # comm_size = the served amount (rate x credited time) in bytes at the link rate.
    for (i, j), got in sizes.items():
        rows = (table["src"] == i) & (table["dst"] == j)
        assert got == pytest.approx(table["served"][rows].sum() * rate / 1e6, abs=len(rows))
    back = io.read_export(tmp_path / "et", format="astra-sim")
    assert back.to_dict() == sched.to_dict()
    assert validate(back, d).ok


def test_system_snippet_names_the_custom_collective(tmp_path: Path) -> None:
    import json

    sched = schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    io.export(sched, format="astra-sim", path=tmp_path / "et", link_rate="100Gbps", collective="all-reduce")
    system = json.loads((tmp_path / "et" / "system.json").read_text())
    assert system["all-reduce-implementation-custom"] == [str(tmp_path / "et" / "ocsched")]
