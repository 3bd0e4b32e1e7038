"""A log written on Windows, or gzipped, read as its plain twin.

The parsers' fast paths (the C passes over a file's bytes, the stream's windows, the column
readers, the ncu page finder) read a file as Linux tools write it: '\\n' line ends, UTF-8 or ASCII,
not compressed. A log redirected on Windows ('\\r\\n' line ends; UTF-16 where PowerShell 5 wrote it,
UTF-8 with a byte-order mark where Notepad or `Out-File -Encoding utf8` did) or gzipped missed them
all: it was decoded whole and read line by line, at 4-17 bytes of memory per input byte and up to 25
times the time.

`unix_twin(path)` gives the path of a temporary file holding the same text in that form (written a
block at a time, never held whole), and the parsers read that one; rows, notes and error messages
name the file given (`LABELS`, which `core.source_label` reads). The twin's parse is the given
file's byte for byte: the text readers make the same text of both (`text.decode` reads either
encoding the same; `text._line_ends` makes every '\\r\\n' a '\\n' first, once the text holds one).
Where that could differ, no twin is made: a UTF-16 text holding a NUL character or starting with a
second byte-order mark; a UTF-8 mark before text that is not all UTF-8 (read as Latin-1); a NUL byte near
the start (binary data); a file whose first `HEAD` bytes hold no '\\r\\n' (a few odd lines of a Linux log
stay as they are); a file below `TWIN_FROM` bytes, whose whole read is cheap.

Standard input ('-') and a named pipe (`profconv parse <(cmd)`) are written to a temporary file as they
come, a block at a time, and read as that file is (part by part where it is long, through its own twin
where it has one): read whole, a 20 MB sweep piped in took ten times the memory of the file.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from itertools import chain

from profconv.errors import InputError
from profconv.io import MAX_GUNZIP_BYTES, gunzip_chunks
from profconv.nogc import give_back
from profconv.parse import native

TWIN_FROM = 256 << 10  # bytes of a plain file (a .gz: any size) from which a twin is made
HEAD = 1 << 16  # bytes looked at to choose the twin's form
BLOCK = 1 << 18  # bytes read and written at a time
LABELS: dict[str, str] = {}  # a twin's path -> the label of the file it stands for
FIFO_FAILED: dict[str, InputError] = {}  # a named pipe no program wrote to -> what its reader says
NOTES: dict[str, str] = {}  # a twin's path -> what its making found to say of the file (input_notes)

_GZIP = b"\x1f\x8b"


@contextlib.contextmanager
def unix_twin(path: str) -> Iterator[str]:
    """`path`, or the path of its plain twin while the block runs (removed after); an InputError
    raised meanwhile names `path`, not the twin. Standard input ('-') and a named pipe are written to a
    file first, a block at a time (then read as a file is: part by part where it is long), their twin
    made of that."""
    from profconv.parse.core import source_label

    made = _stdin_files() if path == "-" else _fifo_files(path) if _is_fifo(path) else \
        [t for t in [_made(path)] if t is not None]
    if not made:
        try:
            yield path
        finally:
            FIFO_FAILED.pop(path, None)  # (not said where an input before it failed)
        return
    twin = made[-1]
    for f in made:
        LABELS[f] = source_label(path)
    try:
        yield twin
    except InputError as exc:
        raise InputError(str(exc).replace(twin, path)) from None
    finally:
        for f in made:
            LABELS.pop(f, None)
            NOTES.pop(f, None)
            with contextlib.suppress(OSError):
                os.unlink(f)


def _stdin_files() -> list[str]:
    """Standard input's bytes written to a file as they are, and that file's twin where it gets one
    (a .gz piped in is decompressed, as a .gz file is); [] where standard input is not read here (none,
    or no temporary file: its reader reads it, and says what is wrong). Once a byte of it is read, a
    failure is one line (InputError): what was read cannot be read again."""
    try:
        read = sys.stdin.buffer.read
    except AttributeError:
        return []
    return _spooled(iter(lambda: read(BLOCK), b""), "-", "standard input")


def _is_fifo(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _fifo_files(path: str) -> list[str]:
    """A named pipe's bytes (`profconv parse <(cmd)`) written to a file as they come, as standard
    input's are, and that file's twin where it gets one. Where no program writes to it, that error
    waits for the pipe's turn (FIFO_FAILED: core._read_fifo says it), so that the inputs' errors
    come in their order."""
    from profconv.parse.core import fifo_blocks

    try:
        made = _new_file()
    except OSError:
        return []
    blocks = fifo_blocks(path, BLOCK)
    try:
        first = next(blocks)  # (waits for its writer)
    except (InputError, OSError) as exc:
        os.close(made[0])
        os.unlink(made[1])
        if isinstance(exc, InputError):
            FIFO_FAILED[path] = exc
        return []  # (cannot be opened: its reader says why, at its turn)
    try:
        return _spooled(chain([first], blocks), path, "the named pipe", made)
    finally:
        blocks.close()


def _spooled(blocks: Iterator[bytes], path: str, what: str, made: tuple[int, str] | None = None) -> list[str]:
    """`blocks` (of `path`, which cannot be read again) written to a temporary file (`made`, else a
    new one), and its twin where it gets one; [] where no file can be made before a block is read."""
    try:
        fd, raw = made or _new_file()
    except OSError:
        return []
    try:
        with os.fdopen(fd, "wb") as out:
            for block in blocks:
                out.write(block)
    except (OSError, ValueError) as exc:
        os.unlink(raw)
        why = getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"{path}: {what} could not be read into {tempfile.gettempdir()} ({why}): "
                         "set TMPDIR to a folder with room for it, or name a file") from None
    twin = _made(raw)
    return [raw] if twin is None else [raw, twin]


def _made(path: str) -> str | None:
    """The twin of `path` written out, or None where it gets none (see the module's docstring)."""
    try:
        if path == "-" or not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            gz = f.read(2) == _GZIP
        if not gz and os.path.getsize(path) < TWIN_FROM:
            return None
        cut: list[int] = []
        blocks = _gunzipped(path, cut) if gz else _read(path)
        head, blocks = _peek(blocks)
        form = _form(head, gz)
        if form is None:
            return None
        twin = _written(form(_joined(head, blocks)))
        del head
        give_back()  # (the blocks' buffers: not to stay resident under the parse's peak)
        if cut and twin is not None:
            NOTES[twin] = (f"the gzip data ends before its end (the file cut while it was written?): read up to "
                           f"where it stops, {cut[0]:,} bytes of text")
        return twin
    except (OSError, InputError):  # unreadable, corrupt, no room for the twin: the file is read as it is
        return None  # (and its reader says what is wrong with it, where it is its turn)


def _read(path: str) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while block := f.read(BLOCK):
            yield block


def _gunzipped(path: str, cut: list[int]) -> Iterator[bytes]:
    """A .gz file's contents a block at a time; a corrupt file or a gzip bomb is the line
    `profconv.io.gunzip` says of it; one that ends before its end mark gives what it holds (`cut`:
    how many bytes that is)."""
    with open(path, "rb") as f:
        yield from gunzip_chunks(f, path, MAX_GUNZIP_BYTES, InputError, BLOCK, cut)


def input_notes(plain: str) -> list[str]:
    """What reading the file a twin stands for found to say of it (a .gz cut short), to be said first
    of its notes: [] for a file read as it is."""
    note = NOTES.get(plain)
    return [] if note is None else [note]


def _peek(blocks: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """The first blocks, joined, 2 x HEAD + 3 bytes of them at least (or all, where fewer: what _form
    looks at), and the blocks after them."""
    got, size = [], 0
    for block in blocks:
        got.append(block)
        size += len(block)
        if size >= 2 * HEAD + 3:
            break
    return b"".join(got), blocks


def _joined(head: bytes, blocks: Iterator[bytes]) -> Iterator[bytes]:
    if head:
        yield head
    yield from blocks


def _form(head: bytes, gz: bool) -> Callable[[Iterator[bytes]], Iterator[bytes]] | None:
    """How the twin is made of the file's (decompressed) blocks: None where it gets none."""
    from profconv.parse.text import utf16_codec

    codec = utf16_codec(head)
    if codec is not None:
        return lambda blocks: _from_utf16(blocks, codec)
    # a NUL byte where core.read_bytes looks for one (its first 64 KiB), in the file or in a twin up to
    # half as long (every line end a '\r\n') or three bytes shorter: binary data, read as it is
    if b"\x00" in head[: 2 * HEAD + 3]:
        return None
    ends = b"\r\n" in head[:HEAD]
    if head.startswith(codecs.BOM_UTF8):
        return lambda blocks: _utf8_unmarked(_unix_ends(blocks) if ends else blocks)
    if ends:
        return _unix_ends
    return (lambda blocks: blocks) if gz else None


def _utf8_unmarked(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """UTF-8 blocks without the byte-order mark that starts them, each checked to be UTF-8
    (text.decode reads a text so only where all of it is: else as Latin-1, the mark then three
    characters of it)."""
    check = codecs.getincrementaldecoder("utf-8")()
    first = True
    for block in blocks:
        if first:
            block = block[len(codecs.BOM_UTF8) :]
            if block.startswith(codecs.BOM_UTF8):  # a second mark: the twin's reader would take it for the first
                raise _NotTwinned
            first = False
        try:
            check.decode(block)
        except UnicodeDecodeError:
            raise _NotTwinned from None
        yield block
    try:
        check.decode(b"", final=True)
    except UnicodeDecodeError:
        raise _NotTwinned from None


def _unix_ends(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """The blocks with every '\\r\\n' a '\\n' (a '\\r' ending a block waits for the next one). The C
    pass (_bytescan.unix_ends) gives bytes.replace's bytes at ten times its speed (a Windows log's
    lines copied whole: 3.7 ms against 38 ms a 20 MB sweep's blocks)."""
    scan = native.load("_bytescan")
    unix = getattr(scan, "unix_ends", None) or (lambda block: block.replace(b"\r\n", b"\n"))
    carry = b""
    for block in blocks:
        block = carry + block if carry else block
        carry = b"\r" if block.endswith(b"\r") else b""
        yield unix(block[:-1] if carry else block)
    if carry:
        yield carry


class _NotTwinned(Exception):
    """The text holds what its twin would read otherwise."""


def _from_utf16(blocks: Iterator[bytes], codec: str) -> Iterator[bytes]:
    """UTF-16 blocks as UTF-8, '\\r\\n' made '\\n' (text.decode's errors: each bad unit U+FFFD)."""
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    carry, first = "", True
    for block in blocks:
        text = carry + decoder.decode(block)
        if first and text:
            if text[0] == "\ufeff":  # a second mark: the UTF-8 twin's reader would take it for the first
                raise _NotTwinned
            first = False
        yield _utf8_lines(text[:-1] if text.endswith("\r") else text)
        carry = "\r" if text.endswith("\r") else ""
    yield _utf8_lines(carry + decoder.decode(b"", final=True))


def _utf8_lines(text: str) -> bytes:
    if "\x00" in text:  # a NUL: read as binary data in one form and not the other
        raise _NotTwinned
    return text.replace("\r\n", "\n").encode("utf-8")


def _written(blocks: Iterator[bytes]) -> str | None:
    """The blocks written to a new temporary file: its path (None, and no file, where the text
    turns out not to be twinned; what the blocks raise is raised, no file left)."""
    fd, twin = _new_file()
    try:
        with os.fdopen(fd, "wb") as out:
            for block in blocks:
                out.write(block)
    except _NotTwinned:
        os.unlink(twin)
        return None
    except BaseException:
        os.unlink(twin)
        raise
    return twin


def _new_file() -> tuple[int, str]:
    """A new temporary file in $TMPDIR for a twin (or standard input's bytes): its descriptor and path."""
    return tempfile.mkstemp(prefix="profconv-twin-", suffix=".log")
