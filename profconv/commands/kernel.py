"""`profconv kernel new`: start a kernel of your own from a correct naive version and its manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from profconv.commands import _complete
from profconv.run.user import manifest, scaffold
from profconv.ui import console

SUMMARY = "Start your own convolution kernel: profconv kernel new NAME --contract device|host|course|python."
app = typer.Typer(help=SUMMARY + "\n\nThen run it next to the ladder: profconv run --model ece408 --kernel NAME.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
app.__doc__ = SUMMARY  # the line `profconv --help` lists (profconv.cli.COMMANDS)

CONTRACT_HELP = ("device: one __global__ function launched as the manifest says; host: extern \"C\" code built with "
                 "nvcc; course: the ECE 408 new-forward.cu; python: launch(x, w, bias, out, shape) on CuPy arrays.")


@app.callback()
def kernel_group() -> None:
    """Start your own convolution kernel (then: profconv run --kernel PATH)."""


@app.command("new")
def new_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The kernel's name: a folder NAME/ is created with its files.")],
    contract: Annotated[str, typer.Option("--contract", "-c", metavar="CONTRACT", autocompletion=_complete.contracts, help=CONTRACT_HELP)] = "device",
    directory: Annotated[Path | None, typer.Option("--dir", metavar="DIR", help="Where to create the folder (default: here).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
) -> None:
    """Write NAME/ with a correct naive kernel for the contract, ready for `profconv run --kernel NAME`."""
    folder = (directory or Path(".")) / name
    paths = scaffold.write(folder, name, contract, force)
    decl = manifest.load(folder)  # what `run --kernel` will read: proves the files are consistent
    con = console()
    for p in paths:
        con.print(f"wrote {p}")
    con.print(f"{decl.contract} kernel {decl.name!r}; next: profconv run --model ece408 --kernel {folder}")
