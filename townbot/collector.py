"""Python's cycle collector: paused while many long-lived objects are made at once, and told
what a process that runs a town can leave out of its view and how often to look.

Loading the code and reading a town's memories each make tens of thousands of objects that are
in no cycle and live on; every collection on the way would walk them all again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside, back on after (also after an error); nothing changes when it
    was already off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# Net new container objects after which the youngest generation is collected (CPython's default
# is 700). A tick makes thousands of objects that live a while and then go by reference
# counting: collecting every 700 walked each of them, and the next generation walked the
# survivors again, before they died. 121 ticks of 100 residents in daytime, the code frozen:
# 267 collections in 321 ms at 700, 8 in 51 ms at 10,000 (about 2.2 ms a tick less); 25
# residents on day 7: 23 -> 5 ms. Neither found a single object in a cycle; the most that
# waits for a collection now is a few megabytes.
YOUNG_OBJECTS = 10_000


def settle_loaded() -> None:
    """For a process about to run a town: what exists now (the loaded code: modules, classes,
    schemas) is frozen out of the collector's view, as it lives as long as the process, and the
    youngest generation waits for YOUNG_OBJECTS new objects."""
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
