"""The ``serve`` command: run the HTTP service of :mod:`ocsched.serve` on uvicorn."""

from __future__ import annotations

import os
import socket
from typing import Annotated

import typer

from ocsched.cli._app import app, cli_errors, fail, float_option, int_option
from ocsched.io._files import os_reason


@app.command("serve")
@cli_errors
def serve_cmd(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (loopback by default; 0.0.0.0 exposes it).")
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port",
            parser=int_option("--port", minimum=0, maximum=65535),
            metavar="INTEGER",
            help="TCP port; 0 picks a free one (printed on start). SimAI calls 8080 by default.",
        ),
    ] = 8080,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            parser=int_option("--workers", minimum=1, maximum=64),
            metavar="INTEGER",
            help="Worker processes (one per core).",
        ),
    ] = 1,
    max_body_mb: Annotated[
        float,
        typer.Option(
            "--max-body-mb",
            parser=float_option("--max-body-mb", low=0.0, closed=False),
            metavar="MB",
            help="Largest request body, in MiB.",
        ),
    ] = 32.0,
    max_ports: Annotated[
        int,
        typer.Option(
            "--max-ports",
            parser=int_option("--max-ports", minimum=2, maximum=1_000_000),
            metavar="INTEGER",
            help="Largest demand (ports) or SimAI request (ranks).",
        ),
    ] = 4096,
    max_switches: Annotated[
        int,
        typer.Option(
            "--max-switches",
            parser=int_option("--max-switches", minimum=1, maximum=1024),
            metavar="INTEGER",
            help="Largest fabric.",
        ),
    ] = 256,
    time_budget: Annotated[
        float,
        typer.Option(
            "--time-budget",
            parser=float_option("--time-budget", low=0.0, closed=False),
            metavar="SECONDS",
            help="Wall-clock time one request may take (then 504, no result); a request may ask for less.",
        ),
    ] = 30.0,
    threads: Annotated[
        int,
        typer.Option(
            "--threads",
            parser=int_option("--threads", minimum=1, maximum=256),
            metavar="INTEGER",
            help="Compute threads per worker.",
        ),
    ] = 4,
    cache_size: Annotated[
        int,
        typer.Option(
            "--cache-size",
            parser=int_option("--cache-size", minimum=0),
            metavar="INTEGER",
            help="SimAI replies kept per worker (0: no cache).",
        ),
    ] = 1024,
    access_log: Annotated[bool, typer.Option("--access-log", help="Log every request.")] = False,
) -> None:
    """Serve scheduling over HTTP/JSON: /v1/schedule, /v1/validate, ... and SimAI's /api/oxc/allreduce.

    SIGTERM or Ctrl-C stops accepting connections and finishes the requests in flight.
    GET /openapi.json describes the endpoints.
    """
    try:
        import uvicorn
        from uvicorn.supervisors import Multiprocess
    except ImportError:
        raise fail("`ocsched serve` needs the serve extra: pip install 'ocsched[serve]'") from None
    from ocsched.serve.limits import Limits

    limits = Limits(
        max_body_bytes=int(max_body_mb * 2**20),
        max_ports=max_ports,
        max_switches=max_switches,
        time_budget_s=time_budget,
        threads=threads,
        cache_size=cache_size,
    )
    os.environ.update(limits.to_env())  # the workers build their app from it
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (socket.gaierror, UnicodeError):
        sock.close()
        raise fail(f"`--host` {host!r} is not an address of this machine") from None
    except OSError as exc:
        sock.close()
        raise fail(f"cannot listen on {host}:{port}: {os_reason(exc)}") from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    typer.echo(f"ocsched serve: listening on http://{shown}:{bound} ({workers} worker(s))")
    config = uvicorn.Config(
        "ocsched.serve.app:create_app_from_env",
        factory=True,
        workers=workers,
        access_log=access_log,
        lifespan="off",
        log_level="info",
        # SIGTERM: stop accepting, let the requests in flight finish (each within its budget).
        timeout_graceful_shutdown=int(time_budget) + 5,
    )
    if workers == 1:
        uvicorn.Server(config).run(sockets=[sock])
    else:
        Multiprocess(config, sockets=[sock]).run()
