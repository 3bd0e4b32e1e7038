"""Library sessions: every command that measures is a session object, usable from Python or a notebook.

A session takes a request (a dataclass of what to do), reports its progress and results through
`Callbacks`, writes its record atomically through one `Recording`, and returns a typed record:

    from profconv.session import RunRequest, RunSession
    outcome = RunSession(RunRequest(model="ece408", images=[100], variants=["cpu"])).run()
    outcome.record.results[0].conv[0].op_time.median_s

Ctrl-C (or a `Callbacks.stop` that returns True) ends a session as the CLI's Ctrl-C does: the record
is kept, marked interrupted, and `profconv.errors.Interrupted` is raised carrying it. The command
modules (`profconv run`, `profconv bench`) only turn options into a request and render the outcome.
Names are loaded on first use, so importing this package imports neither NumPy nor pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from profconv.session.bench import BenchOutcome, BenchRequest, BenchSession
    from profconv.session.events import Callbacks, Note
    from profconv.session.explain import ExplainOutcome, ExplainRequest, ExplainSession
    from profconv.session.grade import GradeOutcome, GradeRequest, GradeSession
    from profconv.session.recording import Recording
    from profconv.session.run import RunOutcome, RunRequest, RunSession

_WHERE = {"Callbacks": "events", "Note": "events", "Recording": "recording",
          "ExplainRequest": "explain", "ExplainSession": "explain", "ExplainOutcome": "explain",
          "GradeRequest": "grade", "GradeSession": "grade", "GradeOutcome": "grade",
          "RunRequest": "run", "RunSession": "run", "RunOutcome": "run",
          "BenchRequest": "bench", "BenchSession": "bench", "BenchOutcome": "bench"}

__all__ = ["BenchOutcome", "BenchRequest", "BenchSession", "Callbacks", "ExplainOutcome", "ExplainRequest",
           "ExplainSession", "GradeOutcome", "GradeRequest", "GradeSession", "Note", "Recording", "RunOutcome",
           "RunRequest", "RunSession"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"profconv.session.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'profconv.session' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
