"""What is graded: submissions from directories, kernel files or a CSV/TOML listing, and their hash.

A submission is a kernel file (.cu, .cuh, .py, or a .toml kernel manifest) or a directory holding
one; `profconv run --kernel PATH` takes either. A directory with subdirectories that hold kernel
files is a class: each subdirectory and each kernel file beside them is one submission. A
directory of kernel files without such subdirectories is one submission (use a listing to grade
loose files one by one).

Listings (paths relative to the listing file):
  CSV:  columns `submission` (required), `name`, `model` (one or several, separated by `;` or
        spaces), `gpu` (a GPU type such as H100), `student` (whose it is: several submissions of one
        student share --student-gpu-seconds); `#` starts a comment line.
  TOML: [[submission]] path = "...", name = "...", models = ["..."], gpu = "H100", student = "..."
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from profconv.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KERNEL_SUFFIXES = (".cu", ".cuh", ".py", ".toml")  # .toml: a kernel manifest (profconv.toml)
LISTING_SUFFIXES = (".csv", ".toml")
_SKIP_PARTS = {"__pycache__", ".git", ".ipynb_checkpoints"}
_NAME_OK = re.compile(r"[^A-Za-z0-9._+-]+")
_GPU_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True)
class Submission:
    """One student's (or one sweep point's) kernel: a file or a directory, with what to run it on."""

    name: str  # unique in the batch; names the job directories
    path: Path  # absolute
    models: tuple[str, ...] = ()  # empty: the command's --model
    gpu: str | None = None  # a GPU type the jobs must run on (H100, A100, ...); None: any
    digest: str = field(default="", compare=False)  # sha256 of the files (see content_hash)
    student: str | None = None  # whose submission (several may be one student's: milestones, versions)


def safe_name(text: str) -> str:
    """A name usable as a directory name and in a Slurm job name. A name with no ASCII letter or digit
    (李, 王) becomes `submission-` and a digest of it, so two such names stay two submissions."""
    name = _NAME_OK.sub("_", text.strip()).strip("._")
    if name.strip("_") and any(c.isalnum() for c in name):
        return name
    return f"submission-{hashlib.sha256(text.strip().encode(errors='surrogateescape')).hexdigest()[:8]}"


def _files(path: Path) -> list[Path]:
    """The files of a submission (links to files included as links; the folders a link names are not walked)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*")
                  if (p.is_symlink() or p.is_file()) and not any(part in _SKIP_PARTS or part.startswith(".")
                                                                 for part in p.relative_to(path).parts))


def content_hash(path: Path) -> str:
    """sha256 over every file's relative path and bytes: the same submission hashes the same anywhere,
    a resubmission that changes one byte does not (hidden files and __pycache__ do not count). Files
    are read in 1 MiB steps (a huge file costs no memory); a symbolic link is hashed as its target's
    name, never followed out of the submission (a link to a 300 MB file elsewhere costs nothing)."""
    h = hashlib.sha256()
    base = path if path.is_dir() else path.parent
    for f in _files(path):
        h.update(f.relative_to(base).as_posix().encode() + b"\0")
        if f.is_symlink():
            h.update(b"symlink -> " + os.readlink(f).encode(errors="surrogateescape"))
        else:
            with f.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


def _has_kernel(path: Path) -> bool:
    return any(p.is_file() and p.suffix in KERNEL_SUFFIXES for p in path.iterdir())


def _is_submission_dir(path: Path) -> bool:
    """A kernel manifest, or kernel files and no subdirectory holding kernel files (that is a class)."""
    if (path / "profconv.toml").is_file():
        return True
    if any(p.is_dir() and not p.name.startswith(".") and p.name not in _SKIP_PARTS and _has_kernel(p)
           for p in path.iterdir()):
        return False
    return _has_kernel(path)


def _one(path: Path, name: str | None, models: tuple[str, ...], gpu: str | None, where: str,
         student: str | None = None) -> Submission:
    if not path.exists():
        raise InputError(f"{path}: no such file or directory" if where == str(path) else
                         f"{where}: no such file or directory: {path}")
    if path.is_file() and path.suffix not in KERNEL_SUFFIXES:
        raise InputError(f"{where}: {path} is not a kernel file ({', '.join(KERNEL_SUFFIXES)}) or a directory")
    if path.is_dir() and not _files(path):
        raise InputError(f"{where}: {path} is an empty directory")
    if gpu and not _GPU_TYPE.fullmatch(gpu.strip()):  # it becomes a Slurm --gres value: no newline, no '#SBATCH'
        raise InputError(f"{where}: gpu {gpu!r} is not a GPU type (letters, digits, '-', '_', '.': H100, A100-80GB)")
    path = path.resolve()
    return Submission(name=safe_name(name or (path.stem if path.is_file() else path.name)), path=path,
                      models=models, gpu=gpu or None, digest=content_hash(path), student=student or None)


def _split_models(text: str) -> tuple[str, ...]:
    return tuple(m for m in re.split(r"[;,\s]+", text.strip()) if m)


def _csv_rows(text: str, where: str) -> list[tuple[int, list[str]]]:
    """(line number, cells) of each line that is not blank or a `#` comment. One listing line is one
    submission: a quote left open (a cell that would run on into the next lines, swallowing the
    students listed there) is refused, naming its line."""
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            rows.append((lineno, next(csv.reader([line], strict=True))))
        except csv.Error as exc:
            raise InputError(f"{where}:{lineno}: {exc} (a quote opened and not closed on this line; a cell "
                             "may not span lines)") from None
    return rows


def read_csv_listing(text: str, base: Path, where: str) -> list[Submission]:
    rows = _csv_rows(text, where)
    fields = [f.strip().lower() for f in (rows[0][1] if rows else [])]
    if "submission" not in fields:
        raise InputError(f"{where}: a CSV listing needs a 'submission' column (and optionally name, model, gpu); "
                         f"found {', '.join(fields) or 'no header'}")
    out = []
    for i, cells in rows[1:]:
        if len(cells) > len(fields):
            raise InputError(f"{where}:{i}: more cells than the header has columns")
        row = {k: v.strip() for k, v in zip(fields, cells)}
        if not row.get("submission"):
            raise InputError(f"{where}:{i}: empty 'submission' cell")
        out.append(_one(base / row["submission"], row.get("name") or None, _split_models(row.get("model", "")),
                        row.get("gpu") or None, f"{where}:{i}", row.get("student") or None))
    return out


def read_toml_listing(text: str, base: Path, where: str) -> list[Submission]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: not valid TOML ({exc})") from None
    except RecursionError:
        raise InputError(f"{where}: not valid TOML (nested too deeply)") from None
    entries = doc.get("submission")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{where}: a TOML listing needs [[submission]] tables with a path")
    out = []
    for i, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise InputError(f"{where}: [[submission]] number {i} lacks a string 'path'")
        models = entry.get("models", entry.get("model", ()))
        if isinstance(models, str):
            models = _split_models(models)
        if not isinstance(models, (list, tuple)) or not all(isinstance(m, str) for m in models):
            raise InputError(f"{where}: [[submission]] number {i}: 'models' must be a list of model names")
        gpu = entry.get("gpu")
        if gpu is not None and not isinstance(gpu, str):
            raise InputError(f"{where}: [[submission]] number {i}: 'gpu' must be a string such as \"H100\"")
        student = entry.get("student")
        if student is not None and not isinstance(student, str):
            raise InputError(f"{where}: [[submission]] number {i}: 'student' must be a string")
        out.append(_one(base / entry["path"], entry.get("name"), tuple(models), gpu, f"{where} [[submission]] {i}",
                        student))
    return out


def _listing_text(path: Path) -> str | None:
    """The text of a CSV listing, or of a TOML file with [[submission]] tables (any other .toml is a
    kernel manifest, hence a submission); None for anything else."""
    if not path.is_file() or path.suffix.lower() not in LISTING_SUFFIXES:
        return None
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the listing ({exc})") from None
    if path.suffix.lower() == ".toml" and not re.search(r"^\s*\[\[\s*submission\s*\]\]", text, re.M):
        return None
    return text


def discover(inputs: list[str]) -> list[Submission]:
    """Every submission named by the command line's arguments, in order; names must be unique."""
    subs: list[Submission] = []
    for arg in inputs:
        path = Path(arg)
        text = _listing_text(path)
        if text is not None:
            reader = read_csv_listing if path.suffix.lower() == ".csv" else read_toml_listing
            subs.extend(reader(text, path.parent, str(path)))
        elif path.is_dir() and not _is_submission_dir(path):
            entries = sorted(p for p in path.iterdir() if not p.name.startswith(".") and p.name not in _SKIP_PARTS
                             and (p.is_dir() or p.suffix in KERNEL_SUFFIXES))
            if not entries:
                raise InputError(f"{path}: no submissions in this directory (no kernel files "
                                 f"{', '.join(KERNEL_SUFFIXES)} and no subdirectories)")
            subs.extend(_one(p, None, (), None, str(path)) for p in entries)
        else:
            subs.append(_one(path, None, (), None, arg))
    seen: dict[str, Path] = {}
    for s in subs:
        if s.name in seen and seen[s.name] != s.path:
            raise InputError(f"two submissions are named {s.name!r} ({seen[s.name]} and {s.path}); "
                             "give them distinct names in a CSV/TOML listing")
        seen[s.name] = s.path
    unique = list({(s.name, s.path): s for s in subs}.values())
    if not unique:
        raise InputError("no submissions given")
    return unique
