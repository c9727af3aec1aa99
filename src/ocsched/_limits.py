"""Every limit on the size of an input, in one place: what ocsched accepts before it allocates.

Each limit bounds the memory or the time an input may make ocsched spend (readers check them
before allocating; :mod:`ocsched.io`, :mod:`ocsched.fabric` and the file formats refuse what is
above them with one line naming the limit). They sit far above any real fabric (OCS radixes are
in the hundreds, a few hundred switches), so only a malformed or hostile input meets them.

The limits of one method (the exact solver's tiny instances, a chart's readable size) live
with that method, under names of their own (``MAX_EXACT_PORTS``, ``MAX_GANTT_SWITCHES``).

>>> MAX_DENSE_PORTS ** 2 <= MAX_DENSE_ELEMENTS
True
"""

from __future__ import annotations

__all__ = [
    "MAX_DENSE_ELEMENTS",
    "MAX_DENSE_PORTS",
    "MAX_DOWN_WINDOWS",
    "MAX_EPS_ENTRIES",
    "MAX_FAILED_LINKS",
    "MAX_GZIP_TEXT",
    "MAX_NNZ",
    "MAX_PORTS",
    "MAX_PORTS_PER_ENDPOINT",
    "MAX_RUNS",
    "MAX_SWITCHES",
]

#: Most ports a demand, a schedule or an iteration may have (sparse and long-form inputs).
MAX_PORTS = 1_000_000
#: Most nonzero entries a demand file may hold.
MAX_NNZ = 10_000_000
#: Most entries of a dense matrix read or generated (800 MB as float64).
MAX_DENSE_ELEMENTS = 100_000_000
#: Most ports the dense schedulers work on (their n x n arrays stay within MAX_DENSE_ELEMENTS).
MAX_DENSE_PORTS = 10_000
#: Most switches a fabric description (:meth:`~ocsched.fabric.Fabric.from_dict`, FABRIC.toml) may
#: expand to, and most a command accepts (far more than any demand can use).
MAX_SWITCHES = 1024
#: Most down windows a fabric description may list (each is checked against every configuration).
MAX_DOWN_WINDOWS = 10_000
#: Most failed links a fabric description may list (a link per port and switch of a large fabric).
MAX_FAILED_LINKS = 100_000
#: Most ports an endpoint may have on one switch (a TPU v4 cube has 2 per OCS).
MAX_PORTS_PER_ENDPOINT = 64
#: Most entries an ``eps`` section of a schedule file may list (a dense 1,000-port demand).
MAX_EPS_ENTRIES = 1_000_000
#: Most bytes a gzip-compressed text file may expand to (a small file must not fill the memory).
MAX_GZIP_TEXT = 4 * 2**30
#: Most runs one sweep config may expand to (counted before any is built).
MAX_RUNS = 1_000_000
