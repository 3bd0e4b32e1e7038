"""File I/O at the edges, in one place: atomic writes, bounded reads of JSON records."""

from __future__ import annotations

import gzip
import io
import os
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from profconv.errors import InputError

MAX_RECORD_BYTES = 512 << 20  # a run record with every sample of a long sweep is a few MB
MAX_GUNZIP_BYTES = 1 << 30  # what a .gz input may expand to: more is refused in one line, not a MemoryError


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write to a temporary file beside `path`, then rename: readers never see half a file.
    The file gets the usual permissions (umask), not mkstemp's 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:  # say the file asked for, not the temporary name beside it
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; the file gets the mode a plain open() would
        data = text.encode() if isinstance(text, str) else text
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def file_inside(base: Path, name: str) -> Path:
    """`base/name` when it names a regular file inside `base` (a record's own directory), else one
    InputError line: an absolute path, `..` or a symbolic link that leaves `base`, a FIFO, a device or a
    directory are refused, so a record can never make profconv read a file it did not write beside it."""
    target = Path(name)
    if not name or target.is_absolute() or target.drive:
        raise InputError(f"{name!r}: not a file name inside the record's directory")
    root = base.resolve()
    path = (root / target).resolve()
    if path != root and root not in path.parents:
        raise InputError(f"{name!r}: outside the record's directory")
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise InputError(f"{name!r}: cannot read ({exc.strerror or exc})") from None
    import stat

    if not stat.S_ISREG(mode):
        raise InputError(f"{name!r}: not a regular file")
    return path


def wait_for_fifo(path: Path, seconds: float = 2.0, say=None) -> None:
    """A FIFO is read only once it has something to read: after `seconds` without data, `say(message)`
    tells the user what profconv waits for (a FIFO nobody writes to would otherwise wait in silence).
    Reads nothing (the parse opens it again)."""
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        readable, _, _ = select.select([fd], [], [], seconds)
        if not readable and say is not None:
            say(f"{path}: a FIFO with nothing written to it yet: waiting for its writer (Ctrl-C stops)")
    finally:
        os.close(fd)


def read_bytes(path: Path, limit: int = MAX_RECORD_BYTES) -> bytes:
    """The file's bytes, or one InputError line (missing, a directory, unreadable, too large, not a
    regular file: a FIFO with no writer would block forever)."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a directory, not a record file")
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: not a regular file (a FIFO, device or socket): not a profconv record")
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a record file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise InputError(f"{path}: larger than {limit >> 20} MiB: not a profconv record")
    return data


def gunzip(data: bytes, path: str | Path, limit: int = MAX_GUNZIP_BYTES, error: type[InputError] = InputError) -> bytes:
    """A .gz file's contents, read in bounded steps: a corrupt file or a gzip bomb is one `error` line."""
    return b"".join(gunzip_chunks(io.BytesIO(data), path, limit, error))


def gunzip_chunks(fileobj: BinaryIO, path: str | Path, limit: int = MAX_GUNZIP_BYTES,
                  error: type[InputError] = InputError, size: int = 64 << 20, cut: list[int] | None = None) -> Iterator[bytes]:
    """A gzip stream's contents `size` bytes at a time at most (`gunzip`'s, or a file's read a block at a
    time: profconv.parse.unix_twin); a corrupt stream or one expanding past `limit` is one `error`
    line. `cut`: a stream that ends before its end mark (a file cut while it was written: a job killed
    while `… | gzip > log.gz` ran) gives every byte it holds, then the count of them is appended to
    `cut`, not an error."""
    total = 0
    try:
        with gzip.GzipFile(fileobj=fileobj) as fh:
            # (read1: what each step decompresses is given before a cut end raises, not lost with it)
            while chunk := fh.read1(size):
                total += len(chunk)
                if total > limit:
                    raise error(f"{path}: expands to more than {limit >> 20:,} MiB; "
                                "split it, or gunzip it and use the part you need")
                yield chunk
    except EOFError as exc:
        if cut is None or not total:
            raise error(f"{path}: corrupt gzip data ({exc})") from None
        cut.append(total)
    except (OSError, zlib.error) as exc:
        raise error(f"{path}: corrupt gzip data ({exc})") from None
