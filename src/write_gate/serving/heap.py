"""The gate's heap, settled once it has started: what startup built (modules, pydantic schemas, the registry,
the tool tables) lives as long as the process, and Python's cyclic collector would otherwise walk all of it at
every full collection.

Why it matters: a crowd's answers (thousands of rows shaped and serialised) promote enough short-lived objects
that a full collection ran every few hundred milliseconds, each one holding the event loop 50 to 80 ms at 50,000
nodes, and every other agent's call waited that long (bench/crowd.py, BENCHMARKS.md). Frozen (`gc.freeze`), the
startup heap is left out of every collection, which then walks only what came after.
"""

import gc

_settled = False  # once per process: the first gate to start settles it; later ones (tests, spaces) need not


def settle_after_start() -> bool:
    """The garbage collected, then everything left frozen, the first time a gate of this process has started.
    True when this call did it. A frozen object that later becomes garbage in a cycle is never freed: the cost
    is bounded by the startup heap, once."""
    global _settled
    if _settled:
        return False
    _settled = True
    gc.collect()
    gc.freeze()
    return True
