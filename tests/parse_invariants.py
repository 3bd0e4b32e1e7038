"""The parser's invariants, checked on every emitted row (test files and fuzzed input alike).

1. every number emitted appears in the source lines of its row (after unit conversion);
2. total ~ calls x avg within print precision;
3. shares consistent with the printed Time(%) of their source table, or the table is flagged;
4. the JSON output is valid JSON (no NaN/Infinity tokens);
nothing raises except profconv's own errors (the callers check that).
"""

from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd

from profconv.analysis.ranking import rank_profile
from profconv.parse.shares import inconsistent_tables

NUMERIC = ["time_pct", "total_ns", "avg_ns", "min_ns", "max_ns", "med_ns", "std_ns", "start_ns", "bytes", "value",
           "value_min", "value_max", "value_total"]
_NUM = re.compile(r"\d+(?:(?:[.,'\u00a0\u202f]| {1,2})\d+)*(?:[eE][+-]?\d+)?|\.\d+")
FACTORS = (1.0, 1e3, 1e6, 1e9, 1024.0, 1024.0**2, 1024.0**3, 1024.0**4, 1024.0**5, 1e12, 1e-2)


def _readings(token: str) -> set[float]:
    """Every value a printed token can stand for: either decimal mark, grouped or not."""
    out: set[float] = set()
    variants = {token, token.replace(" ", ""), token.replace("\u00a0", "").replace("\u202f", "")}
    for t in list(variants):
        t = t.replace("'", "")
        for cand in (t.replace(",", ""), t.replace(".", "").replace(",", "."), t.replace(",", "."), t):
            try:
                out.add(float(cand))
            except ValueError:
                pass
    # space-grouped numbers side by side ('49 486 501 13 085,1'): every run of adjacent groups is a number
    groups = re.split(r"[ \u00a0\u202f]+", token)
    if 2 < len(groups) <= 16:
        for a in range(len(groups)):
            for b in range(a + 2, min(len(groups), a + 7) + 1):
                if b - a < len(groups):
                    out |= _readings("".join(groups[a:b]))
    # a grouped token also holds its parts ('1.5 2.5' in adjacent columns, '69.9,4467' in CSV)
    for sep in (r"[ \u00a0\u202f]", ","):
        for part in re.split(sep, token):
            if part and part != token:
                out |= _readings(part)
    return out


def source_numbers(lines: list[str], lo: int, hi: int) -> list[float]:
    vals: set[float] = set()
    from profconv.parse.text import clean

    for line in lines[max(lo - 1, 0) : hi]:
        for tok in _NUM.findall(line) + _NUM.findall(clean(line)):  # as printed, and with report markup removed
            vals |= _readings(tok)
    return sorted(vals)


def appears(value: float, numbers: list[float]) -> bool:
    for n in numbers:
        for f in FACTORS:
            if math.isclose(value, n * f, rel_tol=1e-9, abs_tol=1e-9):
                return True
    return False


def derived_sections(frame: pd.DataFrame) -> set[tuple[int, str]]:
    """Summary rows profconv computed itself (from traces, from ncu launch durations): sums, not printed."""
    out = set()
    for (p, tool), rows in frame.groupby(["profile", "tool"]):
        secs = set(rows["section"])
        if "gpu-trace" in secs:
            out.add((int(p), "gpu"))
            # a trace's Unified Memory events are summed into unified-memory rows on the trace's lines
            traced = set(rows.loc[rows["section"] == "gpu-trace", "line_start"].astype("int64"))
            um = rows[(rows["section"] == "unified-memory") & rows["line_start"].astype("int64").isin(traced)]
            if len(um):
                out.add((int(p), "unified-memory"))
        if "api-trace" in secs:
            out.add((int(p), "api"))
        if tool == "ncu":
            out.add((int(p), "gpu"))
    return out


def check_numbers(ps, lines: list[str]) -> None:
    frame = ps.frame
    derived = derived_sections(frame)
    cache: dict[tuple[int, int], list[float]] = {}
    for rec in frame.to_dict("records"):
        if (rec["profile"], rec["section"]) in derived:
            continue
        lo, hi = int(rec["line_start"]), int(rec["line_end"])
        fields = [f for f in NUMERIC if rec[f] == rec[f] and rec[f] is not None]
        if rec["calls"] is not pd.NA and rec["calls"] is not None and not str(rec["section"]).endswith("-trace"):
            fields.append("calls")  # (a trace row is one event: its calls=1 is not printed)
        if not fields:
            continue
        nums = cache.get((lo, hi))
        if nums is None:
            nums = cache[(lo, hi)] = source_numbers(lines, lo, hi)
        for f in fields:
            v = float(rec[f])
            assert math.isfinite(v) and v >= 0, (f, v, rec)
            assert appears(v, nums), f"{ps.source} line {lo}-{hi}: {f}={v!r} appears nowhere in {lines[lo - 1:hi]}"


def check_totals(ps, text: str | None = None) -> None:
    f = ps.frame
    ok = f["total_ns"].notna() & f["avg_ns"].notna() & f["calls"].notna()
    lines = text.split("\n") if text is not None else None
    for rec in f[ok].to_dict("records"):
        total, calls, avg = float(rec["total_ns"]), int(rec["calls"]), float(rec["avg_ns"])
        if total == 0 and avg == 0:
            continue
        unit = max(10.0 ** (math.floor(math.log10(avg)) - 1), 1.0) if avg > 0 else 1.0
        if rec["tool"] == "nvhpc-acc":
            unit = max(unit, 1000.0)  # PGI/NVHPC print whole microseconds, the average truncated
        step = _csv_step(lines, rec["line_start"]) if lines is not None else 0.0
        diff = abs(total - calls * avg)
        assert diff <= max(0.01 * total, calls * unit, (step + calls * step) / 2 * (1 + 1e-9)), (
            f"{ps.source} line {rec['line_start']}: total {total} vs {calls} x {avg}")


def _csv_step(lines: list[str], n: int) -> float:
    """A CSV row's coarsest printed step in ns, its cells taken in seconds (an upper bound: nvprof
    --csv prints a column in seconds with six decimals, a microsecond's step); 0 for other rows."""
    line = lines[n - 1] if 0 < n <= len(lines) else ""
    if line.count(",") < 4:
        return 0.0
    decimals = [len(c) - c.index(".") - 1 for c in line.split(",") if c.replace(".", "", 1).isdigit() and "." in c]
    return 1e9 * 10.0 ** -min(decimals) if decimals else 0.0


def check_shares(ps) -> None:
    f = ps.frame
    timed = f[f["share_basis"].notna()]
    for (p, s), rows in timed.groupby(["profile", "section"]):
        share = rows["share"].to_numpy(dtype="float64")
        assert np.all((share >= 0) & (share <= 1 + 1e-9))
        if share.sum() > 0:
            assert abs(share.sum() - 1.0) < 1e-6
        ranked = rank_profile(f, int(p), [str(s)])[0]  # the renderers' ranking agrees with the frame's
        by_line = rows.set_index(["line_start", "name"])["share"]
        for r in ranked.rows.itertuples():
            assert math.isclose(by_line.loc[(r.line_start, r.name)].iloc[0] if hasattr(
                by_line.loc[(r.line_start, r.name)], "iloc") else by_line.loc[(r.line_start, r.name)],
                r.share, rel_tol=1e-9, abs_tol=1e-12)
        assert int(rows["in_top"].sum()) == ranked.top_count
        flagged = bool(ps.table_notes.get((int(p), str(s))))
        if rows["share_basis"].iloc[0] == "total_ns" and inconsistent_tables(rows):
            assert flagged, f"{ps.source}: profile {p} {s}: shares contradict the printed Time(%) unflagged"


def check_json(ps) -> None:
    from profconv.render.parse_output import write_json

    buf = io.StringIO()
    write_json([ps], buf)

    def refuse(token):
        raise AssertionError(f"{ps.source}: {token} in JSON output")

    doc = json.loads(buf.getvalue(), parse_constant=refuse)
    assert len(doc["rows"]) == len(ps.frame)
    # every value reads back as the frame's cell to the bit (floats by their shortest exact text)
    frame = ps.frame
    for row, rec in zip(doc["rows"], frame.astype(object).to_dict("records")):
        assert row["source"] == ps.source
        for col, cell in rec.items():
            missing = cell is None or cell is pd.NA or (isinstance(cell, float) and cell != cell)
            got = row.get(col)
            assert (got is None) if missing else (got == cell and type(got) is type(cell)), (ps.source, col, got, cell)


def check_all(ps, text: str) -> None:
    from profconv.parse.text import normalize

    lines = normalize(text).split("\n")
    check_numbers(ps, lines)
    check_totals(ps, "\n".join(lines))
    check_shares(ps)
    check_json(ps)
