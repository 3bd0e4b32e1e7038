"""Read profiler text into a ProfileSet: detect dialects, parse, attach run context, build the frame."""

from __future__ import annotations

import gzip
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from profconv.errors import InputError, NoProfileFound, StrictModeError
from profconv.parse import context
from profconv.parse.dialects import DIALECTS
from profconv.parse.model import DialectResult, Document, RawProfile
from profconv.parse.names import short_name, strip_correlation
from profconv.parse.text import decode, normalize
from profconv.parse.schema import (
    ROW_FIELDS,
    ProfileInfo,
    conform,
    empty_frame,
)


@dataclass
class ProfileSet:
    """Everything parsed from one input: canonical rows, per-profile context, what was not placed."""

    frame: pd.DataFrame
    profiles: list[ProfileInfo]
    source: str
    unplaced: list[tuple[int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def profile(self, number: int) -> ProfileSet:
        """Only profile `number` (1-based), for --profile."""
        if not any(p.profile == number for p in self.profiles):
            raise InputError(f"{self.source}: no profile {number} (it holds {len(self.profiles)})")
        frame = self.frame[self.frame["profile"] == number].reset_index(drop=True)
        infos = [p for p in self.profiles if p.profile == number]
        return ProfileSet(frame, infos, self.source, self.unplaced, self.notes)


def read_text(path: str) -> tuple[str, str]:
    """The text of a file, '-' (stdin) or a .gz file; one clear error for anything unusable."""
    label = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            p = Path(path)
            if p.is_dir():
                raise InputError(f"{path}: is a directory, not a profiler log")
            data = p.read_bytes()
            if data[:2] == b"\x1f\x8b":
                try:
                    data = gzip.decompress(data)
                except (OSError, EOFError) as exc:
                    raise InputError(f"{path}: corrupt gzip file ({exc})") from None
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a profiler log") from None
    if not data.strip():
        raise InputError(f"{label}: empty input, nothing to parse")
    if b"\x00" in data[:65536] and not _utf16(data):
        raise InputError(
            f"{label}: binary data, not profiler text output "
            "(for .nsys-rep/.ncu-rep files, export text with nsys stats / ncu --csv first)"
        )
    return decode(data), label


def _utf16(data: bytes) -> bool:
    return decode(data[:4096]).count("\x00") == 0 and (data[:2] in (b"\xff\xfe", b"\xfe\xff") or
                                                      data[:4096:2].count(0) == 0 or data[1:4096:2].count(0) == 0)


def parse(path: str, format: str | None = None, strict: bool = False) -> ProfileSet:
    """Parse a profiler log (path, '-' for stdin, .gz accepted) into a ProfileSet."""
    text, label = read_text(path)
    return parse_text(text, label=label, format=format, strict=strict)


def parse_text(text: str, label: str = "<text>", format: str | None = None, strict: bool = False) -> ProfileSet:
    text = normalize(text)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    doc = Document(lines=lines, label=label, text=text)
    if format is not None:
        if format not in DIALECTS:
            raise InputError(f"unknown format {format!r}: choose one of {', '.join(DIALECTS)}")
        chosen = [format]
    else:
        chosen = [name for name, mod in DIALECTS.items() if mod.detect(doc)]
    results: dict[str, DialectResult] = {name: DIALECTS[name].parse(doc) for name in chosen}
    raw: list[RawProfile] = sorted(
        (p for r in results.values() for p in r.profiles), key=lambda p: p.line_start
    )
    claimed = set().union(*(r.claimed for r in results.values())) if results else set()
    unplaced_lines = sorted({n for r in results.values() for n in r.unplaced} - claimed)
    unplaced = [(n, lines[n - 1]) for n in unplaced_lines]
    notes = [note for r in results.values() for note in r.notes]
    if not raw:
        what = f"no {format} profile" if format else "no profiler output (nvprof, nsys, ncu or OpenACC timing)"
        raise NoProfileFound(f"{label}: {what} found")
    if strict and unplaced:
        nums = ", ".join(str(n) for n, _ in unplaced[:10])
        raise StrictModeError(f"{label}: {len(unplaced)} line(s) look like table data but could not be placed (lines {nums})")
    notes.extend(_percent_checks(raw))
    infos = _attach_context(raw, lines)
    frame = _frame(raw)
    return ProfileSet(frame=frame, profiles=infos, source=label, unplaced=unplaced, notes=notes)


def _percent_checks(raw: list[RawProfile]) -> list[str]:
    """A printed Time(%) column that does not add up to about 100% is worth a warning."""
    notes = []
    for number, prof in enumerate(raw, start=1):
        for blk in prof.blocks:
            pcts = [r.time_pct for r in blk.rows if r.time_pct == r.time_pct]
            if not pcts:
                continue
            total = sum(pcts)
            where = f"profile {number}, {blk.section} table (lines {blk.line_start}-{blk.line_end})"
            if abs(total - 100.0) > max(1.5, 0.01 * len(pcts)):
                notes.append(f"{where}: Time(%) adds up to {total:.2f}%, not 100% (rows missing or cut)")
            timed = [(r.time_pct, r.total_ns) for r in blk.rows if r.time_pct == r.time_pct and r.total_ns == r.total_ns]
            time_sum = sum(t for _, t in timed)
            if time_sum > 0 and any(abs(p - 100.0 * t / time_sum) > 5.0 for p, t in timed):
                notes.append(f"{where}: the printed Time(%) disagrees with the Time column (wrong units?); "
                             "shares are computed from the times")
    return notes


def _frame(raw: list[RawProfile]) -> pd.DataFrame:
    parts: list[pd.DataFrame] = []
    for number, prof in enumerate(raw, start=1):
        for blk in prof.blocks:
            if blk.rows:
                recs = [tuple(getattr(r, f) for f in ROW_FIELDS) for r in blk.rows]
                df = conform(pd.DataFrame.from_records(recs, columns=ROW_FIELDS))
            elif blk.frame is not None:
                df = blk.frame  # bulk rows arrive already in schema form
            else:
                continue
            parts.append(df.assign(profile=number, tool=prof.tool))
    if not parts:
        return empty_frame()
    frame = pd.concat(parts, ignore_index=True)
    frame["profile"] = frame["profile"].astype("int64")
    frame["tool"] = frame["tool"].astype("string")
    missing = frame["short_name"].isna()  # trace blocks arrive with theirs
    if missing.any():
        uniq = frame.loc[missing, "name"].drop_duplicates()
        by_base: dict[str, str] = {}  # names may differ only by their [correlation id]
        short = {}
        for n in uniq:
            base = strip_correlation(str(n))
            if base not in by_base:
                by_base[base] = short_name(base)
            short[n] = by_base[base]
        frame.loc[missing, "short_name"] = frame.loc[missing, "name"].map(short)
    return frame


def _attach_context(raw: list[RawProfile], lines: list[str]) -> list[ProfileInfo]:
    """Op Time / Correctness / command lines go to the profile of the same run.

    A run starts at a command line ('* Running …', '$ …'); context inside a profile's line span
    is its own; context before a profile and after the previous command line is its too.
    """
    infos = [
        ProfileInfo(profile=i, tool=p.tool, line_start=p.line_start, line_end=p.line_end,
                    pid=p.pid, command=p.command, device=p.device)
        for i, p in enumerate(raw, start=1)
    ]
    found = context.scan(lines, "\n".join(lines))
    commands = [c.line for c in found if c.kind == "command"]
    for c in found:
        target = None
        for info in infos:
            if info.line_start <= c.line <= info.line_end:
                target = info
                break
        if target is None:
            after = [i for i in infos if i.line_start > c.line]
            if after:
                nxt = after[0]
                if not any(c.line < cmd < nxt.line_start for cmd in commands) or c.kind == "command":
                    # no other run began between this line and the profile
                    target = nxt
                    if c.kind == "command" and any(c.line < cmd < nxt.line_start for cmd in commands):
                        target = None
        if target is None:
            continue
        if c.kind == "command":
            target.command = target.command or c.text
        elif c.kind == "op_time" and c.value is not None:
            target.op_times_s.append(c.value)
        elif c.kind == "correctness":
            target.correctness = c.value
            target.model = c.text or target.model
    return infos
