"""Terminal tables for parsed profiles: ranked sections with the top-share rows marked."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from profconv.analysis.ranking import Ranked, rank_profile
from profconv.parse.core import ProfileSet
from profconv.parse.schema import SECTION_TITLES, TIMED_SECTIONS, context_facts
from profconv.render.format import Column, count, duration, fitted_table
from profconv.ui import heading


@dataclass(frozen=True)
class TableOptions:
    threshold: float = 0.90
    max_rows: int | None = 25  # None: every row
    full_names: bool = False
    metrics: bool = True  # list every metric row (ncu); `run --profile ncu` shows its own summary instead


def summary_line(r: Ranked) -> str:
    title = SECTION_TITLES.get(r.section, r.section)
    n = len(r.rows)
    return f"{r.top_count} of {n} {title} take {r.top_share * 100:.1f}% of {_noun(r.section)} time"


def _noun(section: str) -> str:
    return {"gpu": "GPU", "api": "API", "openacc": "OpenACC", "nvtx": "NVTX range",
            "os-runtime": "OS runtime", "unified-memory": "Unified Memory"}.get(section, section)


def ranked_table(r: Ranked, opts: TableOptions, width: int = 120) -> Table:
    """Columns the tool never printed for this section (all missing) are left out, so the name has room;
    at a narrow width Min, Max, Cum., Time(%) and Calls go first (named in the caption), the name wraps."""
    title = SECTION_TITLES.get(r.section, r.section)
    rows = r.rows if opts.max_rows is None else r.rows.head(max(opts.max_rows, r.top_count))
    recs = rows.to_dict("records")
    present = {c: bool(r.rows[c].notna().any()) for c in ("time_pct", "calls", "avg_ns", "min_ns", "max_ns")}
    # (header, key that must be present, cell, drop rank: lowest is left out first, None: always shown)
    spec = [
        ("", None, lambda row: Text("●", style="green") if row["in_top"] else Text(""), None),
        ("Time(%)", "time_pct", lambda row: "—" if row["time_pct"] != row["time_pct"] else f"{row['time_pct']:.2f}", 4),
        ("Share", None, lambda row: f"{row['share'] * 100:.2f}%", None),
        ("Cum.", None, lambda row: f"{row['cumulative'] * 100:.1f}%", 3),
        ("Total", None, lambda row: duration(row["total_ns"]), None),
        ("Calls", "calls", lambda row: count(row["calls"]), 5),
        ("Avg", "avg_ns", lambda row: duration(row["avg_ns"]), 6),
        ("Min", "min_ns", lambda row: duration(row["min_ns"]), 1),
        ("Max", "max_ns", lambda row: duration(row["max_ns"]), 2),
    ]
    columns = [Column(header, [cell(row) for row in recs], drop=rank)
               for header, key, cell, rank in spec if key is None or present[key]]
    names = [Text(str(row["name"] if opts.full_names else row["short_name"]), style="bold" if row["in_top"] else "dim")
             for row in recs]
    columns.append(Column("Name", names, justify="left", wrap=True))
    hidden = len(r.rows) - len(rows)
    caption = f"{hidden} more row(s) below the threshold not shown (--all shows them)" if hidden > 0 else None
    return fitted_table(title, columns, width, caption=caption)


def metric_table(frame, profile: int, width: int = 120) -> Table | None:
    rows = frame[(frame["profile"] == profile) & (frame["section"].isin(["ncu-metric", "metric"]))]
    if rows.empty:
        return None
    recs = rows.to_dict("records")
    columns = [
        Column("Kernel", [str(row["short_name"]) for row in recs], justify="left", wrap=True),
        Column("Metric", [str(row["metric"]) for row in recs], justify="left"),
        Column("Unit", ["" if row["unit"] is None or row["unit"] is pd.NA else str(row["unit"]) for row in recs],
               justify="left"),
        Column("Value", ["—" if row["value"] != row["value"] else f"{row['value']:,.6g}" for row in recs]),
    ]
    return fitted_table("Metrics", columns, width, wrap_min=16)


def render(ps: ProfileSet, console: Console, opts: TableOptions) -> None:
    for info in ps.profiles:
        where = f" lines {info.line_start}-{info.line_end}" if info.line_start else ""  # collected, not parsed
        heading(console, f"Profile {info.profile} · {info.tool} · {escape(str(ps.source))}{where}")
        for f in context_facts(info):
            console.print(f"  {escape(str(f))}", highlight=False)
        for ranked in rank_profile(ps.frame, info.profile, list(TIMED_SECTIONS), opts.threshold):
            console.print(ranked_table(ranked, opts, console.width))
            console.print(f"  [green]●[/green] {summary_line(ranked)}", highlight=False)
            for note in ps.table_notes.get((info.profile, ranked.section), []):
                console.print(Text(f"  warning: {note}", style="yellow"))
        mt = metric_table(ps.frame, info.profile, console.width) if opts.metrics else None
        if mt is not None:
            console.print(mt)
    if ps.unplaced:
        nums = ", ".join(str(n) for n, _ in ps.unplaced[:20])
        more = "" if len(ps.unplaced) <= 20 else f" (+{len(ps.unplaced) - 20} more)"
        console.print(
            f"[yellow]warning:[/yellow] {len(ps.unplaced)} line(s) look like table data "
            f"but could not be placed: lines {nums}{more}",
            highlight=False,
        )
    for note in ps.general_notes():
        console.print(Text(f"warning: {note}", style="yellow"))
