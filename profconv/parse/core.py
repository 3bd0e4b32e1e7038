"""Read profiler text into a ProfileSet: detect dialects, parse, attach run context, build the frame."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from profconv.errors import InputError, NoProfileFound, StrictModeError
from profconv.io import gunzip
from profconv.parse import context
from profconv.parse.dialects import DIALECTS
from profconv.parse.model import DialectResult, Document, RawProfile
from profconv.parse.names import short_name, strip_correlation
from profconv.parse.schema import (
    ROW_FIELDS,
    ProfileInfo,
    conform,
    empty_frame,
)
from profconv.parse.shares import add_shares, inconsistent_tables
from profconv.parse.text import decode, normalize


@dataclass
class ProfileSet:
    """Everything parsed from one input: canonical rows, per-profile context, what was not placed."""

    frame: pd.DataFrame
    profiles: list[ProfileInfo]
    source: str
    unplaced: list[tuple[int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # every warning, table notes included
    table_notes: dict[tuple[int, str], list[str]] = field(default_factory=dict)  # (profile, section) -> notes

    def general_notes(self) -> list[str]:
        """The notes that belong to no one table (the others are shown next to their table)."""
        own = {table_note(p, s, n) for (p, s), items in self.table_notes.items() for n in items}
        return [n for n in self.notes if n not in own]

    def profile(self, number: int) -> ProfileSet:
        """Only profile `number` (1-based), for --profile."""
        if not any(p.profile == number for p in self.profiles):
            raise InputError(f"{self.source}: no profile {number} (it holds {len(self.profiles)})")
        frame = self.frame[self.frame["profile"] == number].reset_index(drop=True)
        infos = [p for p in self.profiles if p.profile == number]
        notes = {k: v for k, v in self.table_notes.items() if k[0] == number}
        return ProfileSet(frame, infos, self.source, self.unplaced, self.notes, notes)


def table_note(profile: int, section: str, note: str) -> str:
    return f"profile {profile}, {section} table, {note}"


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
            if p.is_char_device() or p.is_block_device() or p.is_socket():
                raise InputError(f"{path}: a device or socket, not a file (pipe it in with '-' if you mean to)")
            data = p.read_bytes()
            if data[:2] == b"\x1f\x8b":
                data = gunzip(data, path)
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
    box = list(read_text(path))  # only _parse holds the text: it can let it go once the rows are out
    label = box.pop()
    return _parse(box, label, format, strict)


def parse_text(text: str, label: str = "<text>", format: str | None = None, strict: bool = False) -> ProfileSet:
    """Parse profiler text (any dialect, or the one `format` names) into a ProfileSet."""
    return _parse([text], label, format, strict)


def _parse(box: list[str], label: str, format: str | None, strict: bool) -> ProfileSet:
    text = normalize(box.pop())
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
    # a line one dialect could not place is unplaced unless another dialect placed it
    unplaced_set: set[int] = set()
    for name, r in results.items():
        others = set().union(*(o.claimed for k, o in results.items() if k != name))
        unplaced_set.update(n for n in r.unplaced if n not in others)
    unplaced_lines = sorted(unplaced_set)
    unplaced = [(n, lines[n - 1]) for n in unplaced_lines]
    notes = [note for r in results.values() for note in r.notes]
    if not raw:
        if unplaced:
            nums = ", ".join(str(n) for n, _ in unplaced[:10])
            raise NoProfileFound(f"{label}: found profiler tables but no row could be read: line(s) {nums} "
                                 "hold values that are not valid numbers, or columns that do not fit the header")
        what = f"no {format} profile" if format else "no profiler output (nvprof, nsys, ncu or OpenACC timing)"
        raise NoProfileFound(f"{label}: {what} found")
    if strict and unplaced:
        nums = ", ".join(str(n) for n, _ in unplaced[:10])
        raise StrictModeError(f"{label}: {len(unplaced)} line(s) look like table data but could not be placed (lines {nums})")
    infos = _attach_context(raw, lines)
    damaged = _drop_inconsistent(raw)
    if damaged:
        unplaced = sorted(set(unplaced) | {(n, lines[n - 1]) for n in damaged})
        notes.append(f"line(s) {', '.join(str(n) for n in damaged[:10])}: total is not calls x average "
                     "(a damaged or mis-paired row): reported as unplaced, not used")
        raw = [p for p in raw if any(b.rows or (b.frame is not None and len(b.frame)) for b in p.blocks)]
        if not raw:
            raise NoProfileFound(f"{label}: found profiler tables but no row could be read: line(s) "
                                 f"{', '.join(str(n) for n in damaged[:10])} are not consistent (total is not calls x average)")
    del doc, lines, text, results  # the rows are out: let the input go before the frame is assembled
    frame = add_shares(_frame(raw))
    table_notes = _table_notes(raw, frame)
    for (number, section), items in table_notes.items():
        notes.extend(table_note(number, section, n) for n in items)
    return ProfileSet(frame=frame, profiles=infos, source=label, unplaced=unplaced, notes=notes,
                      table_notes=table_notes)


def _inconsistent(t: np.ndarray, c: np.ndarray, a: np.ndarray, acc: bool) -> np.ndarray:
    """Where a printed total is not calls x average within print precision (two significant
    digits of the average but at least a whole ns, whole microseconds for OpenACC, 1% of the total)."""
    ok = ~(np.isnan(t) | np.isnan(a) | np.isnan(c))
    with np.errstate(divide="ignore", invalid="ignore"):
        quantum = np.where(a > 0, 10.0 ** (np.floor(np.log10(np.where(a > 0, a, 1.0))) - 1), 1.0)
    quantum = np.maximum(quantum, 1000.0 if acc else 1.0)  # whole microseconds (OpenACC), whole ns
    return ok & (np.abs(t - c * a) > np.maximum(0.01 * t, c * quantum))


def _drop_inconsistent(raw: list[RawProfile]) -> list[int]:
    """Rows whose printed total is not calls x average cannot all be right (a row damaged in
    transit, numbers of two PDF rows paired): they leave their table; their lines are returned."""
    out: list[int] = []
    for prof in raw:
        acc = prof.tool == "nvhpc-acc"
        for blk in prof.blocks:
            if blk.rows:
                t = np.array([r.total_ns for r in blk.rows], dtype="float64")
                a = np.array([r.avg_ns for r in blk.rows], dtype="float64")
                c = np.array([np.nan if r.calls is None else r.calls for r in blk.rows], dtype="float64")
                bad = _inconsistent(t, c, a, acc)
                if bad.any():
                    out.extend(r.line_start for r, b in zip(blk.rows, bad) if b)
                    blk.rows = [r for r, b in zip(blk.rows, bad) if not b]
            elif blk.frame is not None and len(blk.frame) and blk.frame["avg_ns"].notna().any():
                f = blk.frame
                bad = _inconsistent(f["total_ns"].to_numpy("float64", na_value=np.nan),
                                    f["calls"].to_numpy("float64", na_value=np.nan),
                                    f["avg_ns"].to_numpy("float64", na_value=np.nan), acc)
                if bad.any():
                    out.extend(int(x) for x in f.loc[bad, "line_start"])
                    blk.frame = f.loc[~bad].reset_index(drop=True)
    return sorted(out)


def _table_notes(raw: list[RawProfile], frame: pd.DataFrame) -> dict[tuple[int, str], list[str]]:
    """What a reader must know next to a table: Time(%) that does not add up or contradicts the
    times, tables merged from several sources, numbers whose decimal mark is unknown."""
    out: dict[tuple[int, str], list[str]] = {}
    for number, prof in enumerate(raw, start=1):
        for blk in prof.blocks:
            key = (number, blk.section or "?")
            where = f"lines {blk.line_start}-{blk.line_end}"
            out.setdefault(key, []).extend(f"{where}: {n}" for n in blk.notes)
            pcts = [r.time_pct for r in blk.rows if r.time_pct == r.time_pct]
            if not pcts:
                continue
            total = sum(pcts)
            if abs(total - 100.0) > max(1.5, 0.01 * len(pcts)):
                out[key].append(f"{where}: Time(%) adds up to {total:.2f}%, not 100% (rows missing or cut)")
    timed = frame[frame["share_basis"].notna()]
    if timed.empty:
        return {k: v for k, v in out.items() if v}
    # only the sections worth a note: ranked by Time(%), or merged from several tables
    grp = timed.groupby(["profile", "section"], sort=False)
    n_tables = grp["table"].transform("nunique")
    by_pct = (timed["share_basis"] == "time_pct").fillna(False).groupby(
        [timed["profile"], timed["section"]], sort=False).transform("any")
    timed = timed[(n_tables > 1) | by_pct.astype(bool)]
    for (number, section), rows in timed.groupby(["profile", "section"], sort=False):
        key = (int(number), str(section))
        tables = rows["table"].dropna().unique()
        basis = rows["share_basis"].iloc[0]
        where = f"lines {int(rows['line_start'].min())}-{int(rows['line_end'].max())}"
        if basis == "time_pct":
            out.setdefault(key, []).append(
                f"{where}: the Time column contradicts the printed Time(%) (mislabelled units?): ranked by the printed Time(%)")
        elif len(tables) > 1 and rows["time_pct"].notna().any():
            starts = ", ".join(str(int(t)) for t in sorted(tables))
            out.setdefault(key, []).append(
                f"{where}: merged from {len(tables)} source tables (starting at lines {starts}); each printed Time(%) "
                "is relative to its own table, Share is of their summed time")
            for t in inconsistent_tables(rows):
                out[key].append(f"the table at line {t}: its Time column contradicts its printed Time(%)")
    return {k: v for k, v in out.items() if v}


def _frame(raw: list[RawProfile]) -> pd.DataFrame:
    """All rows of all profiles in file order: row blocks gathered into one frame (one conform,
    not one per table: linear in the number of profiles), bulk trace frames in between."""
    parts: list[pd.DataFrame] = []
    recs: list[tuple] = []
    cols = [*ROW_FIELDS, "profile", "tool", "table"]

    def flush() -> None:
        if recs:
            parts.append(conform(pd.DataFrame.from_records(recs, columns=cols)))
            recs.clear()

    for number, prof in enumerate(raw, start=1):
        for blk in prof.blocks:
            if blk.rows:
                tail = (number, prof.tool, blk.line_start)
                recs.extend(tuple(getattr(r, f) for f in ROW_FIELDS) + tail for r in blk.rows)
            elif blk.frame is not None and len(blk.frame):
                flush()
                parts.append(blk.frame.assign(profile=number, tool=prof.tool, table=blk.line_start))
    flush()
    if not parts:
        return empty_frame()
    frame = pd.concat(parts, ignore_index=True)
    frame["profile"] = frame["profile"].astype("int64")
    frame["tool"] = frame["tool"].astype("string")
    frame["table"] = frame["table"].astype("Int64")
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
