"""Python's cycle collector, paused while many long-lived objects are made at once.

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
