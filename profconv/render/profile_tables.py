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
from profconv.render.format import count, duration
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


def ranked_table(r: Ranked, opts: TableOptions) -> Table:
    """Columns the tool never printed for this section (all missing) are left out, so the name has room."""
    title = SECTION_TITLES.get(r.section, r.section)
    table = Table(title=f"{title}", title_justify="left", show_lines=False, pad_edge=False)
    rows = r.rows if opts.max_rows is None else r.rows.head(max(opts.max_rows, r.top_count))
    present = {c: bool(r.rows[c].notna().any()) for c in ("time_pct", "calls", "avg_ns", "min_ns", "max_ns")}
    columns = [("", None), ("Time(%)", "time_pct"), ("Share", None), ("Cum.", None), ("Total", None),
               ("Calls", "calls"), ("Avg", "avg_ns"), ("Min", "min_ns"), ("Max", "max_ns")]
    shown = [(title_, key) for title_, key in columns if key is None or present[key]]
    for title_, _ in shown:
        table.add_column(title_, justify="right", width=1 if title_ == "" else None, no_wrap=True)
    table.add_column("Name", overflow="fold", min_width=24)
    for row in rows.to_dict("records"):
        style = "bold" if row["in_top"] else "dim"
        cells = {
            "": Text("●", style="green") if row["in_top"] else "",
            "Time(%)": "—" if row["time_pct"] != row["time_pct"] else f"{row['time_pct']:.2f}",
            "Share": f"{row['share'] * 100:.2f}%",
            "Cum.": f"{row['cumulative'] * 100:.1f}%",
            "Total": duration(row["total_ns"]),
            "Calls": count(row["calls"]),
            "Avg": duration(row["avg_ns"]),
            "Min": duration(row["min_ns"]),
            "Max": duration(row["max_ns"]),
        }
        name = row["name"] if opts.full_names else row["short_name"]
        table.add_row(*[cells[t] for t, _ in shown], Text(str(name), style=style))
    hidden = len(r.rows) - len(rows)
    if hidden > 0:
        table.caption = f"{hidden} more row(s) below the threshold not shown (--all shows them)"
    return table


def metric_table(frame, profile: int) -> Table | None:
    rows = frame[(frame["profile"] == profile) & (frame["section"].isin(["ncu-metric", "metric"]))]
    if rows.empty:
        return None
    table = Table(title="Metrics", title_justify="left")
    table.add_column("Kernel", overflow="fold")
    table.add_column("Metric")
    table.add_column("Unit")
    table.add_column("Value", justify="right")
    for row in rows.to_dict("records"):
        unit = row["unit"]
        table.add_row(str(row["short_name"]), str(row["metric"]), "" if unit is None or unit is pd.NA else str(unit),
                      "—" if row["value"] != row["value"] else f"{row['value']:,.6g}")
    return table


def render(ps: ProfileSet, console: Console, opts: TableOptions) -> None:
    for info in ps.profiles:
        where = f" lines {info.line_start}-{info.line_end}" if info.line_start else ""  # collected, not parsed
        heading(console, f"Profile {info.profile} · {info.tool} · {escape(str(ps.source))}{where}")
        for f in context_facts(info):
            console.print(f"  {escape(str(f))}", highlight=False)
        for ranked in rank_profile(ps.frame, info.profile, list(TIMED_SECTIONS), opts.threshold):
            console.print(ranked_table(ranked, opts))
            console.print(f"  [green]●[/green] {summary_line(ranked)}", highlight=False)
            for note in ps.table_notes.get((info.profile, ranked.section), []):
                console.print(Text(f"  warning: {note}", style="yellow"))
        mt = metric_table(ps.frame, info.profile) if opts.metrics else None
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
