"""A file's bytes a window at a time, for the sweep readers' one C pass over them (dialects/nvprof/csv_sweep.py,
dialects/nsys_csv_sweep.py, dialects/nvprof/text_columns.py).

A reader asks for the bytes from `base` on (`window(want)`: up to `want` of them, and whether they
reach the file's end), hands them to its C pass, and moves `base` past what that pass took whole
(`advance`); what follows is in the next window. A regular file is mapped (`Mapped`, read-only): its
windows are views of the kernel's own cached pages, nothing copied, and a window the size of the
file is one pass whose columns are the rows' own (no chunk's columns joined). The pages behind `base`
are let go as it moves on, so a long file's mapping holds about one window at a time. A file that
cannot be mapped (a pipe, a FIFO, an empty file) is read through one buffer (`Buffered`:
profconv.parse.read_buffer), what follows a cut moved to its start.

A file cut short while it is mapped (another program truncating it mid-parse: a profiler run again
into the same file, which the shell empties first) faults a read past its new end (SIGBUS), which
ends a mapped reader's process (pyarrow's memory_map's, ripgrep's). Here the mapping is guarded
(`guarded`, profconv.parse._mapguard): such a fault has the rest of the mapping read as zeros, and
the read ends in InputChanged (one line, exit 2) instead of rows of no one version of the file; so
does a file found shorter when its mapping is let go (a cut inside a page reads zeros to the page's
end with no fault). A file still being written (appended to) is read as it was when mapped.

Measured on this project's 2-core VM (docs/performance.md, 2026-12-03): 20 MB read into the kept
buffer 5.7-6.9 ms, mapped 1.0 ms (MAP_POPULATE) to 2.5 ms (faulted in, 306 faults: the kernel maps
16 cached pages a fault).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from profconv.errors import InputChanged
from profconv.parse import read_buffer

PAGE = mmap.ALLOCATIONGRANULARITY
WHOLE = 256 << 20  # a whole-file read's mapped window: a file up to this size one pass


class Mapped:
    """The file `f` (a regular file of at least one byte) mapped read-only, windows from `base` on;
    `step` the bytes a reader asks for at a time."""

    def __init__(self, f: Any, step: int) -> None:
        self.step = step
        self.map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self.view = memoryview(self.map)
        self.size = len(self.map)
        self.f, self.token = f, guard(self.map)
        self.base = 0
        self._dropped = 0  # the pages before this offset let go

    def head(self, n: int) -> bytes:
        """The file's first n bytes (fewer where it is shorter)."""
        return self.map[:n]

    def ascii(self, n: int) -> bool:
        """Whether the file's first n bytes (fewer where it is shorter) are ASCII: looked at where they
        are mapped, not copied (a library read's 4 MiB head: its copy was ~1,000 fresh pages)."""
        import numpy as np

        if n <= 0:
            return True
        return int(np.frombuffer(self.map, dtype=np.uint8, count=min(n, self.size)).max()) < 0x80

    def window(self, want: int) -> tuple[memoryview, bool]:
        """The file's bytes [base, base + want) (fewer at its end), and whether they reach its end."""
        end = min(self.size, self.base + want)
        return self.view[self.base : end], end == self.size

    def rfind(self, sub: bytes, hi: int) -> int:
        """The last `sub` in the window's first `hi` bytes (its index there), -1 where none."""
        at = self.map.rfind(sub, self.base, self.base + hi)
        return at - self.base if at >= 0 else -1

    def advance(self, cut: int) -> None:
        """`base` moved `cut` bytes on; the whole pages before it let go (MADV_DONTNEED: read again
        from the page cache where asked for)."""
        self.base += cut
        upto = self.base - self.base % PAGE
        dontneed = getattr(mmap, "MADV_DONTNEED", None)  # (not on every platform: then kept till closed)
        if upto - self._dropped >= 16 * PAGE and dontneed is not None:
            self.map.madvise(dontneed, self._dropped, upto - self._dropped)
            self._dropped = upto

    def close(self) -> bool:
        """The mapping let go; whether the file was cut short while mapped (`was_cut`)."""
        self.view.release()
        cut = was_cut(self.f, self.size, unguard(self.token))
        try:
            self.map.close()
        except BufferError:  # (a view of it still held: unmapped when the last one goes)
            pass
        return cut


class Buffered:
    """The file `f` read through one buffer (read_buffer's, kept for the next read where `keep`):
    windows from `base` on, what follows a cut moved to the buffer's start; `step` (`size`) the bytes
    a reader asks for at a time."""

    def __init__(self, f: Any, size: int, keep: bool) -> None:
        self.f, self.size_hint, self.keep, self.step = f, 2 * size, keep, size
        self.buf = read_buffer.take(self.size_hint)
        self.have = 0  # the bytes of the file from `base` on in the buffer
        self.eof = False
        self.base = 0

    def head(self, n: int) -> bytes:
        """The file's first n bytes (fewer where it is shorter): read and the file put back at its start
        where it can be (the buffer kept at its size), else read into the buffer (a pipe's)."""
        if not self.have and self.f.seekable():
            data = self.f.read(n)
            self.f.seek(0)
            return data
        self._fill(n)
        return bytes(memoryview(self.buf)[: min(n, self.have)])

    def ascii(self, n: int) -> bool:
        """Whether the file's first n bytes (fewer where it is shorter) are ASCII."""
        return self.head(n).isascii()

    def _fill(self, want: int) -> None:
        """At least `want` bytes from `base` on in the buffer, or all that is left of the file."""
        while self.have < want and not self.eof:
            if len(self.buf) < want:
                self.buf.extend(bytes(max(want, 2 * len(self.buf)) - len(self.buf)))
            got = self.f.readinto(memoryview(self.buf)[self.have : want])
            self.eof = not got
            self.have += got or 0

    def window(self, want: int) -> tuple[memoryview, bool]:
        self._fill(want)
        n = min(want, self.have)
        return memoryview(self.buf)[:n], self.eof and n == self.have

    def rfind(self, sub: bytes, hi: int) -> int:
        return self.buf.rfind(sub, 0, hi)

    def advance(self, cut: int) -> None:
        self.buf[: self.have - cut] = self.buf[cut : self.have]  # (a copy: the two may overlap)
        self.have -= cut
        self.base += cut

    def close(self) -> bool:
        if self.keep:
            read_buffer.give_back(self.buf, self.size_hint)
        return False  # (a read() of a file cut short ends early: what it read is the file as it was)


def mappable(f: Any) -> bool:
    """Whether `f` is a regular file of at least one byte (mmap maps no empty file, no pipe)."""
    try:
        st = os.fstat(f.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    import stat

    return stat.S_ISREG(st.st_mode) and st.st_size > 0


@contextmanager
def windows(f: Any, size: int, whole: bool = False) -> Iterator[Mapped | Buffered]:
    """The file `f` (opened 'rb', at its start) as windows of `size` bytes (a step: see Mapped): mapped
    where it can be, else read through a buffer of 2 x `size` bytes. `whole`: a whole-file read (a
    library's, not a stream's parts): mapped windows of WHOLE bytes, the buffer read_buffer's, kept for
    the next read."""
    src: Mapped | Buffered = Mapped(f, max(size, WHOLE) if whole else size) if mappable(f) else Buffered(f, size, whole)
    try:
        yield src
    finally:
        if src.close():  # (only a mapping is cut short under the reader)
            raise InputChanged(cut_short(f, src.size if isinstance(src, Mapped) else 0))


def guard(mapping: Any) -> int:
    """The mapping's pages guarded (profconv.parse._mapguard: a read past the file's end, where it is
    cut short meanwhile, reads zeros and is counted, not SIGBUS): a token for `unguard`, -1 where not
    guarded (the module not built, or not on this platform)."""
    mod = _guard_module()
    return mod.guard(mapping) if mod is not None else -1


def unguard(token: int) -> int:
    """The guard of `token` let go: the faults caught in its mapping (0 for -1)."""
    mod = _guard_module() if token >= 0 else None
    return mod.unguard(token) if mod is not None else 0


def _guard_module() -> Any:
    """profconv.parse._mapguard where it was built, PROFCONV_PURE_PYTHON or not (it changes no output:
    not an accelerator), else None."""
    try:
        from profconv.parse import _mapguard  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _mapguard


@contextmanager
def guarded(mapping: Any, f: Any) -> Iterator[Any]:
    """`mapping` (of the file `f`) guarded while the block reads it; InputChanged after where the file
    was cut short meanwhile."""
    token = guard(mapping)
    size = len(mapping)
    try:
        yield mapping
    finally:
        if was_cut(f, size, unguard(token)):
            raise InputChanged(cut_short(f, size))


def was_cut(f: Any, size: int, faults: int) -> bool:
    """Whether the file `f`, mapped at `size` bytes, was cut short while mapped: a read past its new end
    was caught (`faults`), or it is shorter now. (A cut inside a page reads zeros to the page's end with
    no fault: a reader may stop there, at a NUL, and have read nothing past the cut.)"""
    if faults:
        return True
    try:
        return os.fstat(f.fileno()).st_size < size
    except (OSError, ValueError):
        return False


def cut_short(f: Any, size: int) -> str:
    """What the user is told of the file `f`, mapped at `size` bytes and cut short while it was read."""
    try:
        now = f"{os.fstat(f.fileno()).st_size:,} now"
    except (OSError, ValueError):
        now = "shorter now"
    return (f"{getattr(f, 'name', 'the input')}: cut short while it was read ({size:,} bytes when opened, {now}): "
            "another program truncated or rewrote it; read it again once it is written")
