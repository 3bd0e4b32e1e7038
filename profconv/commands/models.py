"""`profconv models`: the course's models and their layer shapes (imports neither NumPy nor pandas)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from profconv.commands._options import Width
from profconv.render.format import Column, fitted_table
from profconv.run.models import MODELS, Model
from profconv.ui import console

SCHEMA = "profconv.models"


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
