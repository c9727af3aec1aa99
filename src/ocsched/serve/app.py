"""The ASGI application: routes, limits, the compute threads and the SimAI reply cache.

The event loop only moves bytes: each request's body is read (within ``max_body_bytes``), and
parsing, scheduling, validation and encoding run in a worker thread, so ``/healthz`` answers
while schedules are computed. A request that outlives its time budget gets a 504 and no
schedule (a budget never changes a result: it only withholds one); when ``max_pending``
requests are already computing, the reply is 503. Every error is a JSON body
``{"error": {"status", "field", "message"}}``; an unexpected exception is a 500 that the
worker survives.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import numpy as np
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ocsched._version import __version__
from ocsched.serve import requests as rq
from ocsched.serve import simai
from ocsched.serve.limits import Limits
from ocsched.serve.openapi import openapi
from ocsched.serve.requests import RequestError

log = logging.getLogger("ocsched.serve")
T = TypeVar("T")

try:
    import orjson

    _OPTIONS = orjson.OPT_SERIALIZE_NUMPY

    def dumps(obj: Any) -> bytes:
        """Encode a reply (orjson: numpy arrays and scalars natively)."""
        return orjson.dumps(obj, option=_OPTIONS)

    loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - orjson is in the `serve` extra; json is the fallback

    def dumps(obj: Any) -> bytes:
        """Encode a reply."""
        return json.dumps(obj, default=_plain, allow_nan=False).encode()

    def loads(data: bytes) -> Any:
        """Decode a body."""
        return json.loads(data)


def _plain(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot encode {type(obj).__name__}")


JSON = "application/json"
#: Bodies up to this size are parsed on the event loop; larger ones in a compute thread.
INLINE_PARSE_BYTES = 256 * 1024


def _json(status: int, body: bytes) -> Response:
    return Response(body, status_code=status, media_type=JSON)


class _Jobs:
    """Count the requests whose work has not finished, abandoned ones included (they still run)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.limiter = anyio.CapacityLimiter(limits.threads)
        self.lock = threading.Lock()
        self.busy = 0

    async def run(self, fn: Callable[[], T], budget: float) -> T:
        with self.lock:
            if self.busy >= self.limits.max_pending:
                raise RequestError(
                    503, None, f"the service is busy ({self.busy} requests computing); retry later"
                )
            self.busy += 1
        state = ["queued"]

        def work() -> T:
            with self.lock:
                if state[0] == "cancelled":  # its request gave up while it waited for a thread
                    raise RuntimeError("cancelled")
                state[0] = "running"
            try:
                return fn()
            finally:
                with self.lock:
                    self.busy -= 1
                    state[0] = "done"

        try:
            with anyio.fail_after(budget):
                return await anyio.to_thread.run_sync(work, limiter=self.limiter, abandon_on_cancel=True)
        except TimeoutError:
            raise RequestError(
                504,
                "time_budget_s",
                f"the request needed more than its time budget of {budget:g} s; no result is returned "
                "(the same request gets the same result, so a larger budget helps, a retry does not)",
            ) from None
        finally:
            with self.lock:
                if state[0] == "queued":
                    state[0] = "cancelled"
                    self.busy -= 1


class _Cache:
    """A bounded LRU of encoded SimAI replies, keyed on the canonical request and on the body's hash."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.items: OrderedDict[object, bytes] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: object) -> bytes | None:
        with self.lock:
            value = self.items.get(key)
            if value is not None:
                self.items.move_to_end(key)
                self.hits += 1
            return value

    def put(self, keys: tuple[object, ...], value: bytes) -> None:
        if self.size == 0:
            return
        with self.lock:
            for key in keys:
                self.items[key] = value
                self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


Handler = Callable[[Mapping[str, Any], Limits], Any]


def create_app(limits: Limits | None = None) -> Starlette:
    """Return the ASGI application of ``ocsched serve``.

    Parameters
    ----------
    limits : Limits, optional
        The caps of each request (defaults: :class:`~ocsched.serve.limits.Limits`).

    Examples
    --------
    >>> app = create_app(Limits(max_ports=256))
    >>> sorted(r.path for r in app.routes)[:3]
    ['/api/oxc/allreduce', '/api/oxc/alltoall', '/healthz']
    """
    from ocsched.serve import handlers

    limits = Limits() if limits is None else limits
    jobs = _Jobs(limits)
    cache = _Cache(limits.cache_size)
    spec = dumps(openapi(limits))

    async def body_bytes(request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limits.max_body_bytes):
            raise RequestError(
                413, "body", f"the request body ({declared} bytes) exceeds {limits.max_body_bytes} bytes"
            )
        parts, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limits.max_body_bytes:
                raise RequestError(413, "body", f"the request body exceeds {limits.max_body_bytes} bytes")
            parts.append(chunk)
        return b"".join(parts)

    def parse(raw: bytes) -> Mapping[str, Any]:
        try:
            data = loads(raw)
        except (ValueError, RecursionError) as exc:
            raise RequestError(400, "body", f"the request body is not valid JSON: {exc}") from None
        return rq.body_object(data)

    async def parsed(raw: bytes, budget: float) -> Mapping[str, Any]:
        # A small body parses in well under a millisecond; a large one goes to a thread, so that
        # the event loop (and /healthz) never waits for it.
        if len(raw) <= INLINE_PARSE_BYTES:
            return parse(raw)
        return await jobs.run(lambda: parse(raw), budget)

    def failed(request: Request, exc: Exception) -> Response:
        """The JSON error reply: the request's own (4xx, 503, 504) or an internal error (500)."""
        if not isinstance(exc, RequestError):
            log.error("internal error on %s", request.url.path, exc_info=exc)
            exc = RequestError(500, None, "internal error; the request was not served (see the server log)")
        return _json(exc.status, dumps(exc.to_dict()))

    def endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                t0 = anyio.current_time()
                raw = await body_bytes(request)
                body = await parsed(raw, limits.time_budget_s)
                budget = rq.time_budget(body, limits)
                left = budget - (anyio.current_time() - t0)
                if left <= 0:
                    raise RequestError(
                        504, "time_budget_s", f"the request's time budget of {budget:g} s ran out"
                    )
                out = await jobs.run(lambda: dumps(handler(body, limits)), left)
                return _json(200, out)
            except Exception as exc:
                return failed(request, exc)

        return run

    def oxc(collective: str) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                raw = await body_bytes(request)
                digest = (collective, hashlib.blake2b(raw, digest_size=16).digest())
                hit = cache.get(digest)
                if hit is not None:
                    return _json(200, hit)

                body = await parsed(raw, limits.time_budget_s)

                def work() -> bytes:
                    req = simai.parse(collective, body, limits)
                    out = cache.get(req)
                    if out is None:
                        cache.misses += 1
                        out = dumps(simai.flows(req))
                    cache.put((req, digest), out)
                    return out

                return _json(200, await jobs.run(work, limits.time_budget_s))
            except Exception as exc:
                return failed(request, exc)

        return run

    async def healthz(request: Request) -> Response:
        return _json(
            200,
            dumps(
                {
                    "status": "ok",
                    "pid": os.getpid(),
                    "version": __version__,
                    "busy": jobs.busy,
                    "cache": {"entries": len(cache.items), "hits": cache.hits, "misses": cache.misses},
                }
            ),
        )

    async def algorithms(request: Request) -> Response:
        return _json(200, dumps(handlers.algorithms()))

    async def openapi_json(request: Request) -> Response:
        return _json(200, spec)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        err = RequestError(exc.status_code, None, f"{exc.detail}: {request.method} {request.url.path}")
        return _json(exc.status_code, dumps(err.to_dict()))

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/openapi.json", openapi_json, methods=["GET"]),
        Route("/v1/algorithms", algorithms, methods=["GET"]),
        *(Route(f"/v1/{name}", endpoint(fn), methods=["POST"]) for name, fn in handlers.ENDPOINTS.items()),
        *(Route(f"/api/oxc/{c}", oxc(c), methods=["POST"]) for c in simai.COLLECTIVES),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error})


def create_app_from_env() -> Starlette:
    """The application with the limits ``ocsched serve`` passed to its workers in the environment.

    The compiled kernels are warmed up first, so the first request costs what the others do.
    """
    warm_up()
    return create_app(Limits.from_env())


def warm_up() -> None:
    """Import and prepare what a request uses, on small instances, before serving.

    Where ``ocsched warmup`` (or ``make demo``) has filled the kernel cache, the warm-up
    loads them onto their compiled path, which every later call then takes whatever its size:
    a request is latency, and a small call that runs interpreted is slower (a schedule at
    n = 64 took 3.5 ms against 2.3 ms compiled, in a process that did not know the cache was
    filled). Without a filled cache nothing is compiled here (that would hold the
    start for a minute); the kernels then follow their usual rule. Either way the replies are
    the same.

    What the warm-up leaves (the imports: some 130,000 objects) is then frozen out of the
    garbage collector: a full collection over it took 50 ms, which a request that met one
    waited for (``gc.freeze`` cut the worst latency of the serve benchmark from ~100 to ~70 ms).
    """
    from ocsched import _jit
    from ocsched.schedulers import schedule
    from ocsched.validation import validate
    from ocsched.workloads import generate

    with _jit.compiled_only() if _jit.is_warm() else contextlib.nullcontext():
        for n, s in ((32, 2), (64, 8)):
            demand = generate("standard", n=n, rng=0)
            validate(schedule(demand, switches=s, delta=0.04), demand)
    gc.freeze()
