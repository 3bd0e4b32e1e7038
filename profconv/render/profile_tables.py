"""Terminal tables for parsed profiles: ranked sections with the top-share rows marked.

Rendered from the parse's plain columns (ProfileSet.rows), so printing a table needs no pandas."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from profconv.parse.colviews import Chain, both, holds_page_views, positions
from profconv.parse.core import ProfileSet
from profconv.parse.schema import SECTION_TITLES, TIMED_SECTIONS, ProfileInfo, context_facts
from profconv.parse.shares import share_rows
from profconv.parse.table import Rows
from profconv.render import metric_stream, plain
from profconv.render.format import Column, Fitted, count, duration, fit_table
from profconv.ui import heading, heading_is_rule

if TYPE_CHECKING:
    from profconv.render import ranked_text


@dataclass(frozen=True)
class TableOptions:
    threshold: float = 0.90
    max_rows: int | None = 25  # None: every row
    full_names: bool = False
    metrics: bool = True  # list every metric row (ncu); `run --profile ncu` shows its own summary instead


@dataclass(frozen=True)
class Ranked:
    """One profile section ranked by time: `rows` (dicts of the schema's columns) largest first."""

    profile: int
    section: str
    rows: list[dict[str, Any]]
    top_count: int
    top_share: float  # fraction of the section's time taken by the marked rows
    basis: str  # "total_ns" or "time_pct": what the shares were computed from


def rank_rows(rows: Rows, profile: int, sections: list[str], threshold: float = 0.90) -> list[Ranked]:
    """Each section of one profile ranked by its share (the order and shares of parse/shares.py);
    in_top marks the smallest set of rows reaching `threshold`."""
    out = []
    for section in sections:
        idx = _where(rows, profile, (section,))
        if not idx:
            continue
        sub = rows.take(idx)
        if any(v != v for v in sub.col("share")):  # rows made elsewhere without their shares
            sub = share_rows(sub, threshold)
        basis = str(sub.col("share_basis")[0])
        key = sub.col("time_pct" if basis == "time_pct" else "total_ns")
        order = sorted(range(sub.n), key=lambda i: -(key[i] if key[i] == key[i] else 0.0))
        recs = sub.take(order).records()
        total = 0.0
        top = 0
        for r in recs:
            r["in_top"] = bool((r["cumulative"] - r["share"]) < threshold - 1e-12 and r["share"] > 0)
            if r["in_top"]:
                top += 1
                total += r["share"]
        out.append(Ranked(profile, section, recs, top, total, basis))
    return out


def _where(rows: Rows, profile: int, sections: tuple[str, ...]) -> Sequence[int]:
    """The positions of one profile's rows of these sections (a range where the rows are an ncu
    page's columns kept as views: no look at each of its million rows)."""
    prof, sec = rows.col("profile"), rows.col("section")
    if holds_page_views((prof, sec)):
        at = positions(prof, (profile,))
        if isinstance(at, range) and isinstance(sec, Chain) and not sec.tail:  # (several pages: look in its own)
            return sec.positions_in(sections, at.start, at.stop)
        return both(positions(sec, sections), at)
    return [i for i in range(rows.n) if prof[i] == profile and sec[i] in sections]


def summary_line(r: Ranked) -> str:
    return summary_text(r.section, len(r.rows), r.top_count, r.top_share)


def summary_text(section: str, n: int, top_count: int, top_share: float) -> str:
    """What a ranked table's summary line says: how many of its n rows take how much of the time."""
    if top_count == 0:  # every time empty or zero (OpenACC regions, a UM table printed with 0): no ranking
        return f"none of these {n} rows has a time above zero: nothing to rank"
    title = SECTION_TITLES.get(section, section)
    return f"{top_count} of {n} {title} take {top_share * 100:.1f}% of {_noun(section)} time"


def _noun(section: str) -> str:
    return {"gpu": "GPU", "api": "API", "openacc": "OpenACC", "nvtx": "NVTX range",
            "os-runtime": "OS runtime", "unified-memory": "Unified Memory"}.get(section, section)


def ranked_table(r: Ranked, opts: TableOptions, width: int = 120) -> Fitted:
    """Columns the tool never printed for this section (all missing) are left out, so the name has room;
    at a narrow width Min, Max, Cum., Time(%) and Calls go first (named in the caption), the name wraps."""
    title = SECTION_TITLES.get(r.section, r.section)
    recs = r.rows if opts.max_rows is None else r.rows[: max(opts.max_rows, r.top_count)]
    present = {c: any(row[c] is not None and row[c] == row[c] for row in r.rows)
               for c in ("time_pct", "calls", "avg_ns", "min_ns", "max_ns")}
    if len({row["table"] for row in r.rows if row["table"] is not None}) > 1:
        # merged from several source tables (nsys's kernel and memory-operation reports): each printed
        # Time(%) is of its own table and would contradict Share beside it; the table's note says so
        present["time_pct"] = False
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
    hidden = len(r.rows) - len(recs)
    caption = f"{hidden} more row(s) below the threshold not shown (--all shows them)" if hidden > 0 else None
    return fit_table(title, columns, width, caption=caption)


VALUE_TEXT_SHOWN = metric_stream.VALUE_TEXT_SHOWN


METRIC_ROWS_SHOWN = 1000  # the terminal's Metrics table stops here (--all shows every row): an ncu raw
# page of 20,000 launches holds a million metric rows, which --json and --csv write


def metric_table(rows: Rows, profile: int, width: int = 120, limit: int | None = METRIC_ROWS_SHOWN) -> Fitted | None:
    """A profile's metric rows (the first `limit`; None: every one): kernel, metric, unit and its
    values -- Min, Max and Avg where the tool printed them (nvprof --metrics/--events, ncu
    --print-summary), an event's Total, else the one value. At a narrow width Total, Min and Max go
    first (named in the caption); the kernel wraps."""
    idx = _where(rows, profile, ("ncu-metric", "metric"))
    if not idx:
        return None
    hidden = len(idx) - limit if limit is not None and len(idx) > limit else 0
    if hidden:
        idx = idx[:limit]
    spread, total = metric_stream.value_columns(rows, idx)
    which = metric_stream.shown(spread, total)
    cells = metric_stream.columns(rows, idx, which)
    headers = metric_stream.headers(spread)
    columns = [Column(headers[c], cells[c], justify="left" if c in metric_stream.LEFT else "right",
                      drop=metric_stream.DROP.get(c), wrap=c == metric_stream.KERNEL) for c in which]
    notes = [f"{hidden:,} more metric row(s) not shown (--all shows them; --json and --csv hold every one)"] if hidden else []
    if any(c.endswith("…") and len(c) == VALUE_TEXT_SHOWN for col in columns[3:] for c in col.cells):
        notes.append(metric_stream.CUT_NOTE)
    return fit_table("Metrics", columns, width, wrap_min=metric_stream.WRAP_MIN, caption="; ".join(notes) or None)


def by_profile(rows: Rows) -> dict[Any, list[int]]:
    """Row positions per profile number, in row order (one pass over the rows)."""
    out: dict[Any, list[int]] = {}
    for i, p in enumerate(rows.col("profile")):
        out.setdefault(p, []).append(i)
    return out


MANY_PROFILES = 50
VIEW_PROFILES = 64  # profiles of views whose rows are found by the views, not split out (render_profiles)


def render(ps: ProfileSet, console: Console, opts: TableOptions) -> None:
    render_profiles(ps, console, opts)
    render_footer(ps, console)


def render_profiles(ps: ProfileSet, console: Console, opts: TableOptions) -> None:
    """Each profile's heading, context and ranked tables (a part of a long log at a time, too).
    In a file or a pipe each line and table is written as plain text where render/plain can
    (the bytes rich prints there), by rich otherwise; there the ranked tables of a run of profiles
    are laid out together (render/ranked_text), not one by one."""
    # each profile's tables are ranked from its own rows: the rows are split by profile once
    # (looking for one profile's rows in all of them made 8,000 profiles take minutes); not where
    # they are a few big ncu pages' views: each profile's are found by the views (_where), not copied
    # out as lists (two 10 MB raw pages' table: 321 MiB)
    rows = ps.rows
    views = len(ps.profiles) <= VIEW_PROFILES and holds_page_views((rows.col("profile"), rows.col("section")))
    index = by_profile(rows) if len(ps.profiles) > 1 and not views else None
    out = _Out(console)
    if console.is_terminal and len(ps.profiles) > MANY_PROFILES:  # first-contact-2 m15: minutes of scrolling
        console.print(f"[dim]{len(ps.profiles):,} profiles in {escape(str(ps.source))}: every one follows; "
                      "`--profile N` shows one, `--json` or `--csv` writes all rows at once[/dim]", highlight=False)
    # a run of profiles laid out together (NumPy: loaded for a sweep, not for one profile's tables)
    together = (out.fast is not None and len(ps.profiles) > 1
                and not holds_page_views((rows.col("profile"), rows.col("section"))))
    metrics = opts.metrics and not (together and _METRIC_SECTIONS.isdisjoint(rows.col("section")))
    if together:
        from profconv.render import ranked_text  # (loads NumPy)
    for run, pos in _runs(ps.profiles, index, rows.n) if together else [(ps.profiles, None)]:
        pre = None if pos is None else ranked_text.blocks(rows, pos, opts.threshold, opts.max_rows,
                                                          opts.full_names, console.width, out.trims)
        for info in run:
            _profile(ps, info, _Own(rows, index, info.profile), pre, out, opts, metrics)
        out.flush()


_METRIC_SECTIONS = frozenset(("ncu-metric", "metric"))
RUN_ROWS = 4096  # the rows of a run of profiles laid out together (its text is held until written)


def _runs(profiles: Sequence[ProfileInfo], index: dict[Any, list[int]] | None,
          n: int) -> Iterator[tuple[Sequence[ProfileInfo], Sequence[int]]]:
    """The profiles in runs of about RUN_ROWS rows, with the positions of their rows."""
    if index is None:
        yield profiles, range(n)
        return
    run: list[ProfileInfo] = []
    pos: list[int] = []
    seen: set[Any] = set()
    for info in profiles:
        run.append(info)
        if info.profile not in seen:
            seen.add(info.profile)
            pos.extend(index.get(info.profile, ()))
        if len(pos) >= RUN_ROWS:
            yield run, pos
            run, pos, seen = [], [], set()
    if run:
        yield run, pos


class _Own:
    """One profile's rows, taken from the part's when first asked for."""

    def __init__(self, rows: Rows, index: dict[Any, list[int]] | None, profile: Any) -> None:
        self.rows, self.index, self.profile = rows, index, profile
        self.got: Rows | None = None

    def get(self) -> Rows:
        if self.got is None:
            self.got = self.rows if self.index is None else self.rows.take(self.index.get(self.profile, []))
        return self.got


class _Out:
    """A console written through render/plain where it can be (held, one write a run of profiles),
    by rich otherwise (what is held written first)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.fast = plain.writer(console)
        self.trims = self.fast is not None and self.fast.trims
        self.rules = heading_is_rule(console, 0)  # whether headings may be rules (read once: is_terminal costs)
        if self.fast is not None:
            self.fast.hold()

    def line(self, text: str, markup: bool = False) -> bool:
        return self.fast is not None and self.fast.line(text, markup)

    def table(self, t: Fitted) -> bool:
        return self.fast is not None and self.fast.table(t)

    def write(self, text: str) -> None:
        assert self.fast is not None  # (what is laid out together is laid out for a plain writer)
        self.fast.write(text)

    def draw(self, *what: Any, **kw: Any) -> None:
        self.flush()
        self.console.print(*what, **kw)

    def flush(self) -> None:
        if self.fast is not None:
            self.fast.flush()


def _profile(ps: ProfileSet, info: ProfileInfo, own: _Own, pre: dict[Any, list[ranked_text.Block]] | None,
             out: _Out, opts: TableOptions, metrics: bool) -> None:
    """One profile: its heading, context, ranked sections (laid out in `pre`, or here) and metrics."""
    source, width = str(ps.source), out.console.width
    where = f" lines {info.line_start}-{info.line_end}" if info.line_start else ""  # collected, not parsed
    title = f"Profile {info.profile} · {info.tool} · {source}{where}"
    if not (out.fast and not (out.rules and heading_is_rule(out.console, plain.width(title) or 0))
            and out.line(f"── {title} ──", markup=True)):
        out.flush()
        heading(out.console, f"Profile {info.profile} · {info.tool} · {escape(source)}{where}")
    for f in context_facts(info):
        if not out.line(f"  {f}", markup=True):
            out.draw(f"  {escape(str(f))}", highlight=False)
    if pre is None:
        for ranked in rank_rows(own.get(), info.profile, list(TIMED_SECTIONS), opts.threshold):
            _ranked_section(ps, ranked, out, opts)
    for b in () if pre is None else pre.get(info.profile, ()):
        if b.text is None:
            for ranked in rank_rows(own.get(), info.profile, [b.section], opts.threshold):
                _ranked_section(ps, ranked, out, opts)
        else:
            out.write(b.text)  # the table, and its summary line unless rich must print it
            _summary(ps, info.profile, b.section, b.summary, out)
    limit = None if opts.max_rows is None else METRIC_ROWS_SHOWN
    shown = metrics and _metrics(own.get(), info.profile, width, limit, out)
    for note in (n for s in ("ncu-metric", "metric") for n in ps.table_notes.get((info.profile, s), [])
                 if shown):  # said under the Metrics table ('decimal mark': why a cell is '—')
        if not out.line(f"  warning: {note}"):
            out.draw(Text(f"  warning: {note}", style="yellow"))


def _metrics(rows: Rows, profile: int, width: int, limit: int | None, out: _Out) -> bool:
    """The profile's Metrics table (the first `limit` rows; None: every one) written; False where it
    has no metric row. Every row of many into a file or a pipe: a slice at a time (metric_stream)."""
    if limit is None and out.fast is not None:
        idx = _where(rows, profile, ("ncu-metric", "metric"))
        if len(idx) > metric_stream.FROM and metric_stream.write_all(out.fast, rows, idx, width):
            return True
    mt = metric_table(rows, profile, width, limit)
    if mt is not None and not out.table(mt):
        out.draw(mt)
    return mt is not None


def _ranked_section(ps: ProfileSet, ranked: Ranked, out: _Out, opts: TableOptions) -> None:
    table = ranked_table(ranked, opts, out.console.width)
    if not out.table(table):
        out.draw(table)
    _summary(ps, ranked.profile, ranked.section, summary_line(ranked), out)


def _summary(ps: ProfileSet, profile: Any, section: str, summary: str | None, out: _Out) -> None:
    """A ranked table's summary line (None: written) and its notes."""
    if summary is not None and not out.line(f"  ● {summary}", markup=True):
        out.draw(f"  [green]●[/green] {summary}", highlight=False)
    for note in ps.table_notes.get((profile, section), []):
        if not out.line(f"  warning: {note}"):
            out.draw(Text(f"  warning: {note}", style="yellow"))


def render_footer(ps: ProfileSet, console: Console) -> None:
    """What concerns the whole input: lines that could not be placed, notes of no one table."""
    render_unplaced([n for n, _ in ps.unplaced[:UNPLACED_SHOWN]], len(ps.unplaced), console)
    render_notes(ps.general_notes(), console)


UNPLACED_SHOWN = 20  # line numbers the footer names


def render_unplaced(first: Sequence[int], count: int, console: Console) -> None:
    """How many lines look like table data but could not be placed, the first UNPLACED_SHOWN named."""
    if count:
        nums = ", ".join(str(n) for n in first[:UNPLACED_SHOWN])
        more = "" if count <= UNPLACED_SHOWN else f" (+{count - UNPLACED_SHOWN} more)"
        console.print(
            f"[yellow]warning:[/yellow] {count} line(s) look like table data "
            f"but could not be placed: lines {nums}{more}",
            highlight=False,
        )


def render_notes(notes: Iterable[str], console: Console) -> None:
    """Each note of no one table as a warning line (a long log's may be thousands, from a file)."""
    out = plain.writer(console)  # (thousands of notes: rich wraps each through its segments, ~0.4 ms a note)
    if out is not None:
        out.hold()
    for k, note in enumerate(notes, 1):
        if out is None or not out.wrapped(f"warning: {note}"):
            if out is not None:
                out.flush()
            console.print(Text(f"warning: {note}", style="yellow"))
        elif k % NOTES_HELD == 0:
            out.flush()
    if out is not None:
        out.flush()


NOTES_HELD = 4096  # notes' lines written at once
