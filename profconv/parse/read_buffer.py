"""One read buffer kept for the next whole-file read in this process (the sweep readers' `read`).

A sweep reader reads the file through a buffer of twice its chunk (what follows a chunk's cut moved
to the buffer's start). A new buffer of 8 MiB is zeroed page by page by the kernel at each read where
the heap had been given back: 2,000 page faults, 4-6 ms of a 20 MB file on a 2-core VM. The buffer of
a whole-file read is kept (one) and taken by the next read of that size; a read meanwhile (in another
thread, or nested) makes its own. What a kept buffer holds is not zeroed: a reader uses only the bytes
it read into it.
"""

from __future__ import annotations

_KEPT: list[bytearray] = []


def take(n: int) -> bytearray:
    """A buffer of n bytes: the one kept where it is of that size, else a new one."""
    try:
        buf = _KEPT.pop() if _KEPT and len(_KEPT[-1]) == n else None
    except IndexError:  # (taken meanwhile by another thread)
        buf = None
    return buf if buf is not None else bytearray(n)


def give_back(buf: bytearray, n: int) -> None:
    """Keep `buf` for the next read where it is still of n bytes (not grown) and none is kept (a
    reader's whole-file read gives its buffer back; its parts, a stream's, keep theirs to themselves)."""
    if len(buf) == n and not _KEPT:
        _KEPT.append(buf)
