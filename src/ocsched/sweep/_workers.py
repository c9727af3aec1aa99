"""A local pool's workers: they leave Ctrl-C to the sweep and never outlive it."""

from __future__ import annotations

import os
import signal
import threading
import time


def _watch_parent(parent: int, main: int) -> None:
    # Invariant: a worker never outlives the sweep. If the sweep is killed (even with -9), the
    # pool's forkserver exits, this process is re-parented, and it exits at the next check.
    while True:
        time.sleep(0.25)
        if os.getppid() != parent:
            os._exit(1)
        try:
            os.kill(main, 0)
        except ProcessLookupError:
            os._exit(1)


def _worker_init(main: int) -> None:
    # Workers leave Ctrl-C to the parent, which cancels the pool and keeps what was written.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(os.getppid(), main), daemon=True).start()
