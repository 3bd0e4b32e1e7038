"""`profconv models`: the course's models and their layer shapes (imports neither NumPy nor pandas)."""

from __future__ import annotations

from profconv.commands._options import Width
from profconv.render.format import Column, fitted_table
from profconv.run.models import MODELS
from profconv.ui import console


def models_command(width: Width = None) -> None:
    """List the models with their layer shapes."""
    ms = list(MODELS.values())
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
