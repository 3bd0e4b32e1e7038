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


M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
BIG_BLOCKS = 32 << 20  # bytes


def big_blocks(size: int = BIG_BLOCKS) -> None:
    """Let glibc's malloc keep blocks of up to `size` bytes (32 MiB unless told) on its heap
    instead of mapping each from the kernel and giving it back when freed. A parse of a big input
    allocates and frees buffers of a few MiB over and over (the columns, a slice of JSON text);
    each new mapping is filled page by page by the kernel: 0.1 s of system time of a 50 MB trace
    (glibc raises that threshold by itself only after it has freed a block that large). Freed
    blocks are reused, but a block bigger than any that follows (a whole input's bytes) stays
    resident under the later peak: a `size` below it keeps such blocks mapped.
    Linux with glibc only; elsewhere, or when it cannot be set,
    nothing changes."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt(M_MMAP_THRESHOLD, size)
    mallopt(M_TRIM_THRESHOLD, 2 * size)


def give_back() -> None:
    """Hand the free memory at the top of glibc's heap back to the kernel (malloc_trim): after a
    step that freed big buffers the next steps will not reuse (they map their own), so that they
    do not stay resident on top of the peak. Linux with glibc only; elsewhere nothing happens."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        return
