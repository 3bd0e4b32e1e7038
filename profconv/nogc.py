"""The cyclic garbage collector paused while a bulk step allocates millions of small objects.

Reading a big trace makes a tuple, a match or a row object per line; every 700 such allocations
start a collection, and the oldest generation's collections walk every tracked object the process
holds, the rows read so far included: a third of the CPU time of `profconv parse` on a 50 MB trace
went there. The rows hold no reference cycles, so nothing is left uncollected by pausing: reference
counting frees them as before, and a cycle made meanwhile is collected once the collector is back.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No automatic collections inside the block; the collector's state is restored after it
    (nested blocks and a caller that had it off already are left as they were)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
