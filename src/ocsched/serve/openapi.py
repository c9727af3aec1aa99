"""The OpenAPI 3.1 description of the service (``GET /openapi.json``), declared by hand."""

from __future__ import annotations

from typing import Any

from ocsched._version import __version__
from ocsched.serve.limits import Limits


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _post(summary: str, request: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    errors = {
        str(code): {"description": what, "content": {"application/json": {"schema": _ref("Error")}}}
        for code, what in (
            (400, "The body is not a JSON object."),
            (413, "The body exceeds the size limit."),
            (422, "A field is invalid or over a limit; `field` names it."),
            (500, "An internal error (the worker survives)."),
            (503, "Too many requests computing; retry later."),
            (504, "The time budget ran out; no result is returned."),
        )
    }
    return {
        "post": {
            "summary": summary,
            "requestBody": {"required": True, "content": {"application/json": {"schema": request}}},
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": reply}}},
                **errors,
            },
        }
    }


def _get(summary: str, reply: dict[str, Any]) -> dict[str, Any]:
    return {
        "get": {
            "summary": summary,
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": reply}}}},
        }
    }


def _body(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "required": required, "additionalProperties": False, "properties": props}


def openapi(limits: Limits) -> dict[str, Any]:
    """Return the OpenAPI document, with ``limits`` stated where they apply.

    >>> doc = openapi(Limits())
    >>> doc["openapi"], sorted(doc["paths"])[:2]
    ('3.1.0', ['/api/oxc/allreduce', '/api/oxc/alltoall'])
    """
    n, s = limits.max_ports, limits.max_switches
    number = {"type": "number", "minimum": 0}
    fabric_props = {
        "fabric": _ref("Fabric"),
        "switches": {"type": "integer", "minimum": 1, "maximum": s},
        "delta": {"oneOf": [number, {"type": "array", "items": number, "maxItems": s}]},
        "reconfiguration": {"enum": ["all-stop", "partial"]},
        "time_budget_s": {"type": "number", "exclusiveMinimum": 0, "maximum": limits.time_budget_s},
    }
    simai_request = _body(
        ["dpCommDomain", "commDomainVolume"],
        ranktable={
            "type": "object",
            "description": "SimAI's rank table (rank_count, rank_list[{rank_id, level_list}]).",
        },
        dpCommDomain={
            "type": "array",
            "items": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        },
        commDomainVolume={"type": "integer", "minimum": 0, "description": "Bytes of each rank's buffer."},
        rankIdRackIdMap={"type": "object", "additionalProperties": {"type": "string"}},
        algName={
            "type": "string",
            "default": "ALGO_OXC_RING",
            "description": "ALGO_OXC_RING or an ocsched scheduler.",
        },
        fabric=_ref("Fabric"),
    )
    flows = {
        "type": "array",
        "description": "[src_rank, dst_rank, step, datasize]: steps contiguous from 0, each rank at most "
        "once per step as a source and once as a destination.",
        "items": {"type": "array", "items": {"type": "integer"}, "minItems": 4, "maxItems": 4},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ocsched",
            "version": __version__,
            "description": "Schedules traffic over parallel optical circuit switches. Times are in the "
            "demand's unit; a demand entry is the time to send i -> j at one link's line rate.",
        },
        "paths": {
            "/healthz": _get("Liveness", {"type": "object"}),
            "/v1/algorithms": _get(
                "The schedulers, iteration schedulers and SimAI algorithm names", {"type": "object"}
            ),
            "/v1/schedule": _post(
                "Schedule a demand",
                _body(
                    ["demand"],
                    demand=_ref("Demand"),
                    algorithm={"type": "string", "default": "spectra"},
                    seed={"type": "integer", "minimum": 0, "default": 0},
                    **fabric_props,
                ),
                _ref("Schedule"),
            ),
            "/v1/validate": _post(
                "Check a schedule against a demand",
                _body(
                    ["demand", "schedule"], demand=_ref("Demand"), schedule=_ref("Schedule"), **fabric_props
                ),
                {
                    "type": "object",
                    "properties": {
                        "ok": {"type": "boolean"},
                        "makespan": {"type": "number"},
                        "configurations": {"type": "integer"},
                        "violations": {"type": "array", "items": {"type": "string"}},
                    },
                },
            ),
            "/v1/bound": _post(
                "Lower bound on the makespan",
                _body(["demand"], demand=_ref("Demand"), **fabric_props),
                {"type": "object", "properties": {"lower_bound": {"type": "number"}}},
            ),
            "/v1/reschedule": _post(
                "Repair a schedule after a switch or link failure",
                _body(
                    ["demand", "schedule", "failure"],
                    demand=_ref("Demand"),
                    schedule=_ref("Schedule"),
                    failure={
                        "type": "object",
                        "required": ["switch", "at"],
                        "properties": {
                            "switch": {"type": "integer", "minimum": 0},
                            "port": {"type": "integer", "minimum": 0},
                            "at": number,
                        },
                    },
                    placement={"type": "string", "default": "pack"},
                    time_budget_s=fabric_props["time_budget_s"],
                ),
                _ref("Schedule"),
            ),
            "/v1/iteration": _post(
                "Schedule a training iteration (phases with compute gaps)",
                _body(
                    ["iteration"],
                    iteration={"type": "object", "description": "The ocsched.sequence JSON form."},
                    algorithm={"type": "string", "default": "spectra-seq"},
                    base={"type": "string", "default": "spectra"},
                    seed={"type": "integer", "minimum": 0, "default": 0},
                    **fabric_props,
                ),
                {"type": "object", "description": "The ocsched.iteration-schedule JSON form."},
            ),
            "/api/oxc/allreduce": _post("SimAI OXC: an all-reduce's flows", simai_request, flows),
            "/api/oxc/alltoall": _post("SimAI OXC: an all-to-all's flows", simai_request, flows),
        },
        "components": {
            "schemas": {
                "Demand": {
                    "description": f"An n x n matrix (n <= {n}): nested lists, triplets or a base64 .npy.",
                    "oneOf": [
                        {"type": "array", "maxItems": n, "items": {"type": "array", "items": number}},
                        {
                            "type": "object",
                            "required": ["n", "src", "dst", "value"],
                            "properties": {
                                "n": {"type": "integer", "minimum": 1, "maximum": n},
                                "src": {"type": "array", "items": {"type": "integer"}},
                                "dst": {"type": "array", "items": {"type": "integer"}},
                                "value": {"type": "array", "items": number},
                            },
                        },
                        {"type": "object", "required": ["npy"], "properties": {"npy": {"type": "string"}}},
                    ],
                },
                "Fabric": {
                    "type": "object",
                    "description": "A fabric file's table as JSON: model, switches [{delta, rate, count}], "
                    "down [{switch, start, end}], failed_links [{port, switch, start}].",
                },
                "Schedule": {
                    "type": "object",
                    "description": "The ocsched.schedule JSON form (docs/schedule.schema.json).",
                    "required": ["format", "version", "ports", "switches"],
                },
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {
                                "status": {"type": "integer"},
                                "field": {"type": ["string", "null"]},
                                "message": {"type": "string"},
                            },
                        }
                    },
                },
            }
        },
    }
