"""`profconv models`: the course's models and their layer shapes (imports neither NumPy nor pandas)."""

from __future__ import annotations

import json
import sys
import textwrap
from typing import Annotated

import typer

from profconv.commands._options import Width
from profconv.render.format import Column, fitted_table
from profconv.run.models import MODELS, Model
from profconv.ui import console, stdout_is_terminal, width_set

SCHEMA = "profconv.models"
LINE = 80  # a file or a pipe: the markdown listing's longest line


def model_dict(m: Model) -> dict:
    """A model as plain data: what the table shows, each conv layer's shape for one image as numbers too."""
    return {"name": m.name, "semester": m.semester, "input_shape": list(m.input_shape), "spec": m.spec,
            "reference_accuracy": m.reference_accuracy, "data": m.data,
            "conv_layers": [{"layer": layer.name, "shape": s.text(),
                             "dims": {"M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P}}
                            for layer, s in m.conv_shapes(1)]}


def models_command(
    width: Width = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the models as JSON (schema profconv.models) instead of the table.")] = False,
) -> None:
    """List the models with their layer shapes."""
    ms = list(MODELS.values())
    if json_out:
        doc = {"schema": SCHEMA, "schema_version": 1, "models": [model_dict(m) for m in ms]}
        sys.stdout.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        return
    if not stdout_is_terminal() and not width_set():  # a file or a pipe: the markdown, every value whole
        sys.stdout.write(models_markdown(ms))
        return
    columns = [
        Column("model", [m.name for m in ms], justify="left"),
        Column("semester", [m.semester for m in ms], justify="left", drop=2),
        Column("input", ["x".join(str(d) for d in m.input_shape) for m in ms], justify="left"),
        Column("conv layers (per image)", ["; ".join(f"{layer.name}: {s.text()}" for layer, s in m.conv_shapes(1))
                                           for m in ms], justify="left", wrap=True),
        Column("net", [m.spec for m in ms], justify="left", wrap=True, drop=1),
        Column("course accuracy", [m.reference_accuracy for m in ms], justify="left", wrap=True),
    ]
    con = console()
    con.print(fitted_table("Models", columns, con.width, wrap_min=14))


def _item(label: str, text: str) -> list[str]:
    """`- label: text` wrapped at LINE between words, continued two spaces in (one markdown list item)."""
    return textwrap.wrap(text, LINE, initial_indent=f"- {label}: ", subsequent_indent="  ",
                         break_long_words=False, break_on_hyphens=False)


def models_markdown(ms: list[Model]) -> str:
    """The models in a file or a pipe: a section per model, each value whole, no line over LINE columns (the
    table, laid out for no terminal, was 304 columns wide); `--width N` draws the table, `--json` is for
    programs."""
    out = ["# Models", ""]
    for m in ms:
        out += [f"## {m.name}", "", *_item("semester", m.semester),
                *_item("input", "x".join(str(d) for d in m.input_shape)), "- conv layers (per image):"]
        out += [ln for layer, s in m.conv_shapes(1) for ln in textwrap.wrap(
            f"{layer.name}: {s.text()}", LINE, initial_indent="  - ", subsequent_indent="    ", break_long_words=False)]
        out += [*_item("net", m.spec), *_item("course accuracy", m.reference_accuracy), ""]
    return "\n".join(out).rstrip("\n") + "\n"
