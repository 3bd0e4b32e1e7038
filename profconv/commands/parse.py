"""`profconv parse FILE…`: any profiler's text output as ranked tables, JSON or CSV."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import pandas as pd
import typer

from profconv.commands._options import FullNames, Threshold, Width
from profconv.errors import InputError
from profconv.parse import parse
from profconv.parse.core import ProfileSet
from profconv.records import ParsedInput, ParsedProfile, ParsedRow, ParseOutput, struct_from
from profconv.render.profile_tables import TableOptions, render
from profconv.ui import console


class Format(str, Enum):
    nvprof = "nvprof"
    nsys = "nsys"
    ncu = "ncu"
    acc = "acc"


def rows_with_source(sets: list[ProfileSet]) -> pd.DataFrame:
    frames = [ps.frame.assign(source=ps.source) for ps in sets]
    df = pd.concat(frames, ignore_index=True)
    return df[["source", *[c for c in df.columns if c != "source"]]]


def to_json(sets: list[ProfileSet]) -> str:
    """The parse output record (profconv.records.ParseOutput, schemas/parse.schema.json)."""
    def clean(v):
        if v is None or v is pd.NA or (isinstance(v, float) and v != v):
            return None
        return v

    out = ParseOutput(
        inputs=[ParsedInput(source=ps.source, profiles=[struct_from(ParsedProfile, vars(p)) for p in ps.profiles],
                            unplaced_lines=[n for n, _ in ps.unplaced], warnings=list(ps.notes)) for ps in sets],
        rows=[struct_from(ParsedRow, {k: clean(v) for k, v in rec.items()})
              for rec in rows_with_source(sets).astype(object).to_dict(orient="records")],
    )
    return out.to_json()


def parse_command(
    files: Annotated[list[str], typer.Argument(help="Profiler logs ('-' for stdin, .gz accepted).")],
    format: Annotated[Format | None, typer.Option("--format", "-f", help="Force a dialect instead of detecting it.")] = None,
    profile: Annotated[int | None, typer.Option("--profile", "-p", min=1, metavar="N", help="Show only profile N (1-based) of each file.")] = None,
    threshold: Threshold = 0.90,
    as_json: Annotated[bool, typer.Option("--json", help="Write the canonical rows as JSON instead of tables.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Write the canonical rows as CSV instead of tables.")] = False,
    strict: Annotated[bool, typer.Option(help="Fail if any line looks like table data but could not be placed.")] = False,
    all_rows: Annotated[bool, typer.Option("--all", help="Show every row, not just the top ones.")] = False,
    full_names: FullNames = False,
    width: Width = None,
) -> None:
    """Read nvprof, Nsight Systems, Nsight Compute or OpenACC timing text and rank what takes the time."""
    if as_json and as_csv:
        raise InputError("choose one of --json and --csv")
    sets = []
    for path in files:
        ps = parse(path, format=format.value if format else None, strict=strict)
        if profile is not None:
            ps = ps.profile(profile)
        sets.append(ps)
    if as_json:
        sys.stdout.write(to_json(sets) + "\n")
        return
    if as_csv:
        rows_with_source(sets).to_csv(sys.stdout, index=False)
        return
    opts = TableOptions(threshold=threshold, max_rows=None if all_rows else 25, full_names=full_names)
    for ps in sets:
        render(ps, console(), opts)
