"""``ocsched serve``: scheduling as an HTTP/JSON service (starlette on uvicorn, the ``serve`` extra).

The application (:func:`create_app`) answers ``POST /v1/schedule``, ``/v1/validate``,
``/v1/bound``, ``/v1/reschedule`` and ``/v1/iteration`` with the library's JSON forms,
``GET /v1/algorithms``, ``/healthz`` and ``/openapi.json``, and SimAI's external OXC service at
``POST /api/oxc/allreduce`` and ``/api/oxc/alltoall`` (:mod:`~ocsched.serve.simai`). Each
request is measured against :class:`Limits` before any work is done; a refused one gets a JSON
error naming the field.

Modules: :mod:`~ocsched.serve.app` (routes, threads, cache), :mod:`~ocsched.serve.handlers`
(one function per ``/v1`` endpoint), :mod:`~ocsched.serve.requests` (bodies to library
objects), :mod:`~ocsched.serve.simai`, :mod:`~ocsched.serve.openapi`, :mod:`~ocsched.serve.limits`.
"""

from __future__ import annotations

from ocsched.serve.limits import Limits

__all__ = ["Limits", "create_app"]


def __getattr__(name: str) -> object:
    # The application needs starlette (the `serve` extra); Limits does not.
    if name == "create_app":
        from ocsched.serve.app import create_app

        return create_app
    raise AttributeError(f"module 'ocsched.serve' has no attribute {name!r}")
