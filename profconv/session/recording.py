"""The one place a session's record is written: claimed, rewritten atomically, marked interrupted.

- The directory: `--out DIR` as given (made if missing), else a fresh `runs/STEM[-k]` made with mkdir
  (two sessions started in the same second never share one).
- The claim: the first write creates the record file only if no file of that name exists (a hard
  link of the finished temporary file: atomic, whole or absent), so a record this session did not
  write is never replaced -- not a record left by an earlier run, not one a concurrent run just wrote
  -- unless the request says `replace` (`--force`).
- Later writes replace the file atomically (a temporary file beside it, then rename): a reader, or
  a run killed mid-write, never sees half a record.
- A session that ends before it recorded anything (a refused input, an early Ctrl-C) withdraws its
  claim: its file is removed, and the directory too when this session made it and it is empty.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from profconv.errors import InputError
from profconv.io import write_atomic


class RecordExists(InputError):
    """The record file is there already and this session was not told to replace it."""


def check_out(out: Path | None, name: str, replace: bool = False) -> Path | None:
    """`--out DIR` checked before any work, so a bad one costs nothing: a file there, a file on the
    way or a directory named like the record is a usage error (exit 2), so is a record already there
    (unless `replace`); a directory the system will not let us write is one line, exit 5."""
    if out is None:
        return None
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file, not a directory (the record is written to DIR/{name})")
    existing = next(p for p in (out, *out.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise InputError(f"--out {out}: {existing} is a file, not a directory")
    if (out / name).is_dir():
        raise InputError(f"--out {out}: {out / name} is a directory (the record file goes there)")
    if (out / name).exists() and not replace:
        raise RecordExists(f"--out {out}: {out / name} exists (another run's record): give another --out, "
                           "or --force to replace it")
    if not os.access(existing, os.W_OK | os.X_OK):
        code = errno.EROFS if _read_only(existing) else errno.EACCES  # say which, as the system would
        raise OSError(code, os.strerror(code), str(existing))
    return out


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def fresh_directory(parent: Path, stem: str) -> Path:
    """`parent/stem`, or `stem-2`, `stem-3`, ... if taken: made here (mkdir, not exist_ok), so two runs
    started in the same second never share a directory and never overwrite each other's record."""
    parent.mkdir(parents=True, exist_ok=True)
    for k in range(1, 10_000):
        path = parent / (stem if k == 1 else f"{stem}-{k}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent / stem}: 10,000 directories of that name exist")


def _claim(path: Path, data: bytes) -> None:
    """Create `path` holding `data` only if nothing of that name exists: whole or not at all."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        mask = os.umask(0o022)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise RecordExists(f"{path}: another run wrote a record there while this one ran; nothing was "
                               "overwritten (give each run its own --out)") from None
        except OSError as exc:  # a file system without hard links: exclusive create, then the atomic replace
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
                raise
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666 & ~mask))
            except FileExistsError:
                raise RecordExists(f"{path}: another run wrote a record there while this one ran; nothing "
                                   "was overwritten (give each run its own --out)") from None
            os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


class Recording:
    """The record file of one session. `open()` before the work, `save(record)` after each step,
    `close(kept)` at the end; `path` is where the record is (or will be)."""

    def __init__(self, out: Path | None, name: str, stem: str, replace: bool = False) -> None:
        self.out, self.name, self.stem, self.replace = out, name, stem, replace
        self.directory: Path | None = None
        self._made_dir = False
        self._claimed = False
        self.saves = 0

    @property
    def path(self) -> Path:
        return (self.directory or self.out or Path("runs") / self.stem) / self.name

    def open(self) -> Path:
        """Check `--out` and make the directory; returns it."""
        check_out(self.out, self.name, self.replace)
        if self.out is not None:
            self._made_dir = not self.out.exists()
            self.out.mkdir(parents=True, exist_ok=True)
            self.directory = self.out
        else:
            self.directory = fresh_directory(Path("runs"), self.stem)
            self._made_dir = True
        return self.directory

    def save(self, record) -> Path:
        """Write the record (a profconv.records Record): the first time as a claim, then atomically."""
        if self.directory is None:
            self.open()
        text = record.to_json()
        if not self._claimed and not self.replace:
            _claim(self.path, text.encode())
        else:
            write_atomic(self.path, text)
        self._claimed = True
        self.saves += 1
        return self.path

    def withdraw(self) -> None:
        """Undo a session that recorded nothing: its file, and its directory when made here and empty."""
        if self._claimed:
            self.path.unlink(missing_ok=True)
            self._claimed = False
        if self._made_dir and self.directory is not None:
            try:
                self.directory.rmdir()
            except OSError:
                pass  # not empty (a profiler's log, a sweep plan): kept
