"""The notebook example (examples/notebook/profconv_from_python.ipynb) runs: every code cell executed in
order in one namespace, as a Jupyter kernel would (no Jupyter needed; CPU only)."""

from __future__ import annotations

import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "notebook" / "profconv_from_python.ipynb"


def code_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text())
    assert nb["nbformat"] == 4
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_notebook_example_runs(capsys):
    import shutil

    namespace: dict = {"__name__": "__main__"}
    try:
        for i, source in enumerate(code_cells(NOTEBOOK)):
            exec(compile(source, f"{NOTEBOOK.name}[cell {i}]", "exec"), namespace)
    finally:
        if "workdir" in namespace:
            shutil.rmtree(namespace["workdir"], ignore_errors=True)
    out = capsys.readouterr().out
    assert "results as they came: [('cpu', 20, 'ok'), ('cpu', 40, 'ok')]" in out
    assert "conv1 on 40 images:" in out and "(median of 5 runs)" in out
    assert "# profconv report" in out
    frame = namespace["profiles"].frame
    assert frame.loc[frame["name"] == "conv_forward_kernel", "total_ns"].item() == 7374000


def test_notebook_has_no_stored_outputs():
    """Committed clean: outputs are made by running it, never stale copies of an old run."""
    nb = json.loads(NOTEBOOK.read_text())
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb["cells"] if c["cell_type"] == "code")
