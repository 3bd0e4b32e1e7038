"""Options shared by several commands, with Typer's own range checks (a bad value is a usage error, exit 2)."""

from __future__ import annotations

import math
from typing import Annotated

import typer

from profconv import ui


def _share(value: float) -> float:
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise typer.BadParameter(f"must be a share in (0, 1], got {value}")
    return value


def _fraction(value: float) -> float:
    if not (math.isfinite(value) and value >= 0.0):
        raise typer.BadParameter(f"must be a fraction >= 0 (0.05 is 5%), got {value}")
    return value


def _width(value: int | None) -> int | None:
    if value is not None:
        ui.set_width(value)
    return value


Threshold = Annotated[
    float,
    typer.Option("--threshold", callback=_share, metavar="SHARE",
                 help="Mark the rows that together take this share of the time (0 < SHARE <= 1)."),
]
Regression = Annotated[
    float,
    typer.Option("--regression-threshold", callback=_fraction, metavar="FRACTION",
                 help="With --compare: the minimum effect: B slower than A by at least this fraction "
                      "(and significant, see --alpha) is a regression."),
]
Repeat = Annotated[int, typer.Option("--repeat", metavar="N", min=1, max=100_000, help="Timed repeats per conv layer (median and min reported).")]
Warmup = Annotated[int, typer.Option("--warmup", metavar="N", min=0, max=100_000, help="Untimed warm-up runs before timing.")]
FullNames = Annotated[bool, typer.Option("--full-names", help="Show full kernel signatures instead of shortened names.")]
Width = Annotated[
    int | None,
    typer.Option("--width", min=ui.MIN_WIDTH, max=ui.MAX_WIDTH, callback=_width, is_eager=True, metavar="N",
                 help="Lay tables out for N columns (default: the terminal's width; complete plain lines "
                      "when output goes to a file or pipe)."),
]
