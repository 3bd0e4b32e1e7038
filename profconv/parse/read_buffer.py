"""One read buffer kept for the next whole-file read in this process (the sweep readers' `read` of a
file that cannot be mapped: a pipe's; a regular file is mapped, profconv.parse.file_windows).

A sweep reader reads such a file through a buffer of twice its chunk (what follows a chunk's cut moved
to the buffer's start). A new buffer of 8 MiB is zeroed page by page by the kernel at each read where
the heap had been given back: 2,000 page faults, 4-6 ms of a 20 MB file on a 2-core VM. The buffer of
a whole-file read is kept (one) and taken by the next read of that size; a read meanwhile (in another
thread, or nested) makes its own. What a kept buffer holds is not zeroed: a reader uses only the bytes
it read into it.

A new buffer starts at a page's first byte. The kernel copies a file's cached pages into a read's
buffer with `rep movsb`, which on x86 runs about three times slower where the buffer's address is 1-31
bytes past the file offset's, modulo the 4 KiB page (its loads alias the stores just made): a
bytearray of megabytes is malloc'd by mmap, 16 bytes past a page's start, and the file's first bytes
are at offset 0 -- 15.8 against 5.2 ms for 20 MB in 4 MiB reads on this project's VM
(docs/performance.md, session 38).
"""

from __future__ import annotations

_KEPT: list[bytearray] = []

PAGE = 4096


def take(n: int) -> bytearray:
    """A buffer of n bytes: the one kept where it is of that size, else a new one (`aligned`)."""
    try:
        buf = _KEPT.pop() if _KEPT and len(_KEPT[-1]) == n else None
    except IndexError:  # (taken meanwhile by another thread)
        buf = None
    return buf if buf is not None else aligned(n)


def give_back(buf: bytearray, n: int) -> None:
    """Keep `buf` for the next read where it is still of n bytes (not grown) and none is kept (a
    reader's whole-file read gives its buffer back; its parts, a stream's, keep theirs to themselves)."""
    if len(buf) == n and not _KEPT:
        _KEPT.append(buf)


def aligned(n: int) -> bytearray:
    """A new zeroed bytearray of n bytes, its first byte at a page's start where n is a page or more and
    CPython puts it there: `del b[:k]` moves a bytearray's start k bytes on, not its bytes (elsewhere:
    as made)."""
    if n < PAGE:
        return bytearray(n)
    buf = bytearray(n + PAGE)
    del buf[: -address(buf) % PAGE]
    del buf[n:]
    return buf


def address(buf: bytearray) -> int:
    """The address of buf's first byte."""
    import numpy as np

    return int(np.frombuffer(buf, dtype=np.uint8).__array_interface__["data"][0]) if buf else 0
