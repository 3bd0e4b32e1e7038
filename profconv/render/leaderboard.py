"""The grade leaderboard as a terminal table, GitHub markdown, CSV and HTML (frames from grade.leaderboard;
HTML through the report's Document renderer: sortable columns, self-contained)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

_COLOURS = {"ok": "green", "FAILED": "red", "timeout": "red", "crashed": "red", "error": "red",
            "lost": "yellow", "unplaced": "yellow", "skipped": "yellow"}


def layer_columns(board: pd.DataFrame) -> list[str]:
    return [c for c in board.columns if c.startswith("op_")]


def _ms(v: object) -> str:
    return f"{float(v) * 1e3:.3f}" if isinstance(v, (int, float)) and pd.notna(v) else "—"


def _x(v: object) -> str:
    return f"{float(v):.2f}x" if isinstance(v, (int, float)) and pd.notna(v) else "—"


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and pd.notna(v) else None


def _x_within(r: dict | pd.Series) -> str:
    """The ratio to cuDNN with the half-width of its range over both 95% intervals, e.g. 1.37x±2%."""
    x, lo, hi = _num(r["vs_cudnn"]), _num(r.get("vs_cudnn_low")), _num(r.get("vs_cudnn_high"))
    if x is None:
        return "—"
    if lo is None or hi is None:
        return f"{x:.2f}x"
    return f"{x:.2f}x±{max(hi - x, x - lo) / x:.0%}"


def _x_range(r: dict | pd.Series) -> str:
    """Markdown: the ratio and its range, e.g. 1.37x (1.33–1.41x)."""
    x, lo, hi = _num(r["vs_cudnn"]), _num(r.get("vs_cudnn_low")), _num(r.get("vs_cudnn_high"))
    if x is None:
        return "—"
    return f"{x:.2f}x" + (f" ({lo:.2f}–{hi:.2f}x)" if lo is not None and hi is not None else "")


def _gpu(r: dict | pd.Series) -> str:
    """The GPU and which one: `0: NVIDIA H100 80GB HBM3`."""
    name = _md_cell(r["gpu"])
    dev = r.get("device")
    return f"{dev}: {name}" if isinstance(dev, str) and dev else name


def _judged(board: pd.DataFrame) -> bool:
    """Whether any submission was judged by the course's rules (records from before the judge were not)."""
    return "course" in board.columns and bool(board["course"].notna().any())


def _runs(board: pd.DataFrame) -> bool:
    """Whether any submission ran more than once (--runs): then its runs and their spread are shown."""
    return "runs" in board.columns and bool((board["runs"].fillna(1) > 1).any())


def _spread(r: dict | pd.Series) -> str:
    """'3 runs ±4%': the runs of a submission and their (max - min) / total."""
    runs = r.get("runs")
    if runs is None or pd.isna(runs):
        return "—"
    spread = r.get("spread")
    return f"{int(runs)} runs" + (f" ±{spread * 50:.0f}%" if isinstance(spread, float) and pd.notna(spread) else "")


def _prev(r: dict | pd.Series) -> str:
    """x previous, with the regression said."""
    text = _x(r["vs_previous"])
    reg = r.get("regression")
    return f"{text} regression" if reg is not None and reg is not pd.NA and bool(reg) else text


def _rank(v: object) -> str:
    return "" if v is pd.NA or v is None or (isinstance(v, float) and pd.isna(v)) else str(v)


def terminal(board: pd.DataFrame, title: str, width: int = 80):
    """Rank, submission, verdict, Op Time per layer (ms), total, ratios, laid out for `width` with the
    shared table layout (numbers never wrap; per-layer and ratio columns left out first, and named);
    the reasons go below the table (see reasons)."""
    from rich.text import Text

    from profconv.render.format import Column, fitted_table

    rows = list(board.to_dict("records"))
    lay = layer_columns(board)
    cols = [Column("#", [_rank(r["rank"]) for r in rows]),
            Column("submission", [str(r["submission"]) for r in rows], justify="left", wrap=True)]
    if board["model"].nunique() > 1:
        cols.append(Column("model", [str(r["model"]) for r in rows], justify="left", drop=5))
    cols.append(Column("verdict", [Text(str(r["verdict"]), style=_COLOURS.get(str(r["verdict"]), "red"))
                                   for r in rows], justify="left"))
    if "device" in board.columns and board["device"].notna().any():
        cols.append(Column("GPU", [str(r["device"]) if isinstance(r["device"], str) else "—" for r in rows],
                           drop=2))
    if _judged(board):
        cols.append(Column("optimisations", [_md_cell(r["optimisations"]) for r in rows], justify="left", wrap=True,
                           drop=3))
    cols += [Column(c[3:], [_ms(r[c]) for r in rows], drop=1) for c in lay]
    cols += [Column("total", [_ms(r["total_s"]) for r in rows]),
             Column("x cuDNN", [_x_within(r) for r in rows], drop=3),
             Column("x median", [_x(r["vs_median"]) for r in rows], drop=4)]
    if _runs(board):
        cols.append(Column("runs", [_spread(r) for r in rows], drop=2))
    if "vs_previous" in board.columns:
        cols.append(Column("x prev", [_prev(r) for r in rows], drop=2))
    return fitted_table(title, cols, width, caption="Op Time in ms (median); x: time ratios, below 1 is faster; "
                        "±: the ratio's range over both medians' 95% intervals")


def reasons(board: pd.DataFrame) -> list[str]:
    """One line per submission that is not ok: `name (model): verdict: reason`; then the warnings of the ok
    ones (`name (model): warning: ...`, a course's edge shapes or partial credit)."""
    out = []
    for _, r in board.iterrows():
        if r["verdict"] != "ok":
            out.append(f"{r['submission']} ({r['model']}): {r['verdict']}: {r['reason'] or 'no reason recorded'}")
    for _, r in board.iterrows():
        if r["verdict"] == "ok" and isinstance(r.get("warnings"), str) and r["warnings"]:
            out.append(f"{r['submission']} ({r['model']}): warning: {r['warnings']}")
    return out


def _link(path: object, base: Path | None) -> str:
    if not isinstance(path, str) or not path:
        return "—"
    shown = os.path.relpath(path, base) if base is not None else path
    return f"[{Path(path).name}]({Path(shown).as_posix()})"


def _md_cell(text: object) -> str:
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return "—"
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(board: pd.DataFrame, title: str, base: Path | None = None, notes: list[str] | None = None) -> str:
    """GitHub markdown: the table with links (relative to `base`) to each submission's report and record."""
    lay = layer_columns(board)
    prev = "vs_previous" in board.columns
    judged = _judged(board)
    head = ["#", "submission", "model", "GPU", "verdict", *(["rule", "optimisations", "outside the timed call"]
                                                             if judged else []),
            *[f"{c[3:]} (ms)" for c in lay], "total (ms)",
            "x cuDNN", "x median", *(["runs"] if _runs(board) else []), *(["x previous"] if prev else []),
            "Correctness", "report", "record"]
    lines = [f"# {title}", "", "| " + " | ".join(head) + " |", "|" + "|".join("---:" if i == 0 or h.endswith(
        ("(ms)", "cuDNN", "median", "previous", "Correctness")) else "---" for i, h in enumerate(head)) + "|"]
    for _, r in board.iterrows():
        corr = f"{r['correctness']:.4f}" if pd.notna(r["correctness"]) else "—"
        cells = [_rank(r["rank"]), _md_cell(r["submission"]), _md_cell(r["model"]), _gpu(r),
                 r["verdict"], *([_md_cell(r["rule"]), _md_cell(r["optimisations"]), _md_cell(r["outside"])]
                                 if judged else []),
                 *[_ms(r[c]) for c in lay], _ms(r["total_s"]), _x_range(r), _x(r["vs_median"]),
                 *([_spread(r)] if _runs(board) else []), *([_prev(r)] if prev else []), corr,
                 _link(r["report"], base), _link(r["record"], base)]
        lines.append("| " + " | ".join(cells) + " |")
    bad = reasons(board)
    if bad:
        lines += ["", "## Not ok", ""] + [f"- {_md_cell(n)}" for n in bad]
    if notes:
        lines += ["", "## About this run", ""] + [f"- {n}" for n in notes]
    lines += ["", "Op Time: median of the timed repeats of the submission's kernel on each conv layer; "
              "x cuDNN: its total Op Time over cuDNN's in the same job (in brackets: its range over both totals' 95% "
              "intervals); x median: over the median total of the "
              "correct submissions on the same model and GPU"
              + ("; runs: each submission's repeat runs and ± half their spread (max - min) over the total"
                 if _runs(board) else "")
              + ("; x previous: over the same submission's total in the previous grade (milestone), a regression "
                 "marked." if prev else ".")]
    return "\n".join(lines) + "\n"


def csv(board: pd.DataFrame) -> str:
    """Every leaderboard column, machine-readable (seconds, not ms)."""
    return board.to_csv(index=False, float_format="%.9g")


def document(board: pd.DataFrame, title: str, base: Path | None = None, notes: list[str] | None = None):
    """The leaderboard as a report Document (for the HTML renderer): one sortable table, the reasons."""
    from profconv.render.document import Bullets, Column, Document, Paragraph, Section, Table

    frame = board.copy()
    for key in ("report", "record"):
        frame[key] = [os.path.relpath(p, base) if isinstance(p, str) and p and base is not None else p
                      for p in frame[key]]
    frame["rank"] = frame["rank"].astype("object").where(frame["rank"].notna(), None)
    cols = [Column("rank", "#", "int"), Column("submission", "submission", "code"), Column("model", "model"),
            Column("gpu", "GPU"), *([Column("device", "device")] if "device" in board.columns else []),
            Column("verdict", "verdict"),
            *([Column("rule", "rule", "code"), Column("optimisations", "optimisations"),
               Column("outside", "outside the timed call")] if _judged(board) else []),
            *[Column(c, f"{c[3:]} Op Time", "seconds") for c in layer_columns(board)],
            Column("total_s", "total", "seconds"), Column("vs_cudnn", "x cuDNN", "ratio"),
            *([Column("vs_cudnn_low", "x cuDNN low", "ratio"), Column("vs_cudnn_high", "x cuDNN high", "ratio")]
              if "vs_cudnn_low" in board.columns else []),
            Column("vs_median", "x median", "ratio"),
            *([Column("runs", "runs", "int"), Column("spread", "spread", "ratio")] if _runs(board) else []),
            *([Column("vs_previous", "x previous", "ratio"), Column("regression", "regression")]
              if "vs_previous" in board.columns else []),
            Column("correctness", "Correctness", "number", digits=".4f"), Column("report", "report"),
            Column("record", "run record")]
    note = ("Op Time: median of the timed repeats of the submission's kernel per conv layer. x cuDNN: total "
            "over cuDNN's in the same job (low/high: its range over both totals' 95% intervals); x median: over "
            "the median total of the correct submissions on the same model and GPU. Paths are relative to this file. "
            "Click a header to sort.")
    section = Section("Leaderboard").add(Table("leaderboard", "", frame, cols, note=note))
    bad = reasons(board)
    if bad:
        from profconv.render.markdown import code

        section.sections.append(Section("Not ok").add(Bullets([code(n) for n in bad])))  # a reason may hold backticks
    else:
        section.add(Paragraph("Every submission is ok."))
    if notes:
        section.sections.append(Section("About this run").add(Bullets(list(notes))))
    return Document(title=title, sections=[section])


def html(board: pd.DataFrame, title: str, base: Path | None = None, notes: list[str] | None = None) -> str:
    from profconv.render import html as html_mod
    from profconv.render.document import RenderOptions

    return html_mod.render(document(board, title, base, notes), RenderOptions())
