"""`ExplainSession`: why each conv kernel of a recorded run takes its time, and what to try next.

    from profconv.session.explain import ExplainRequest, ExplainSession
    outcome = ExplainSession(ExplainRequest(run="runs/ece408-fa20")).run()
    for x in outcome.explanations:
        print(x.ev.key, x.diagnosis.bound, [a.technique for a in x.advice])

The session first collects the evidence the record lacks (`collect`: auto | yes | no | ncu | sass;
auto: the SASS wherever nvcc and cuobjdump are, the targeted ncu pass where a GPU and ncu are) and
stores it in run.json only when something was collected; then diagnoses every op from what the run
directory holds (report/explain.py). Notes say what could not be collected and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from profconv.errors import InputError, ProfconvError
from profconv.records import RunRecord
from profconv.session.events import Callbacks, Note

COLLECT = ("auto", "yes", "no", "ncu", "sass")


@dataclass
class ExplainRequest:
    run: str  # a run directory or its run.json
    only: list[str] = field(default_factory=list)  # variant or variant/layer names; [] for every op
    collect: str = "auto"
    images: int | None = None  # images for the ncu pass (default: the run's)
    timeout: float = 1800.0  # seconds the ncu pass may take

    def path(self) -> Path:
        if self.collect not in COLLECT:
            raise InputError(f"--collect takes {', '.join(COLLECT)}, not {self.collect!r}")
        p = Path(self.run)
        p = p / "run.json" if p.is_dir() else p
        if not p.is_file():
            raise InputError(f"{self.run}: no run.json there: give a run directory of `profconv run`")
        return p


@dataclass
class ExplainOutcome:
    path: Path
    record: RunRecord
    explanations: list  # report.explain.Explanation, in the record's order
    notes: list[Note] = field(default_factory=list)
    stored: bool = False  # evidence was collected and written to run.json


class ExplainSession:
    def __init__(self, request: ExplainRequest, callbacks: Callbacks | None = None) -> None:
        self.request = request
        self.cb = callbacks or Callbacks()

    def run(self) -> ExplainOutcome:
        from profconv.report.explain import explain_run
        from profconv.report.inputs import RunInput, read_record

        path = self.request.path()
        inp = RunInput(path, read_record(path))
        out = ExplainOutcome(path, inp.record, [])
        if self.request.collect != "no":
            self._collect(inp, out)
        out.explanations = explain_run(inp, set(self.request.only) if self.request.only else None)
        if self.request.only and not out.explanations:
            raise InputError(f"--variant {', '.join(self.request.only)}: no such diagnosable op in {self.request.run}")
        for n in out.notes:
            self.cb.note(n)
        return out

    def _wanted(self, inp) -> tuple[bool, bool, list[Note]]:
        """Which evidence to collect here, and notes for what this machine cannot (auto) — or an error (asked for)."""
        from profconv.profile import sass_capture
        from profconv.profile.external import find_tool
        from profconv.run import gpu

        what, have = self.request.collect, inp.record.evidence
        want_sass = what in ("yes", "sass") or (what == "auto" and not (have and have.sass))
        want_ncu = what in ("yes", "ncu") or (what == "auto" and not (have and have.ncu))
        notes: list[Note] = []
        if want_sass:
            try:
                sass_capture.find_tool("nvcc"), sass_capture.find_tool("cuobjdump")
            except ProfconvError as exc:
                if what in ("yes", "sass"):
                    raise
                notes.append(Note(str(exc), "warning", "SASS not collected"))
                want_sass = False
        if want_ncu:
            why = None if gpu.cupy_or_none() is not None else gpu.why_no_gpu()
            if why is None:
                try:
                    find_tool("ncu")
                except ProfconvError as exc:
                    why = str(exc)
            if why is not None:
                if what in ("yes", "ncu"):
                    raise InputError(f"--collect {what} needs the GPU machine for the ncu pass: {why}")
                notes.append(Note(f"not collected here ({why})", "warning", "ncu counters"))
                want_ncu = False
        return want_sass, want_ncu, notes

    def _collect(self, inp, out: ExplainOutcome) -> None:
        from profconv.io import write_atomic
        from profconv.report import evidence

        want_sass, want_ncu, out.notes = self._wanted(inp)
        if not (want_sass or want_ncu):
            return
        rec = inp.record
        got = evidence.collect(rec, inp.path.parent, ncu=want_ncu, sass=want_sass, images=self.request.images,
                               timeout=self.request.timeout, say=lambda m: self.cb.progress(m, None, None))
        out.notes += [Note(n, "warning") for n in got.notes]
        if got.sass or got.ncu:  # the record changes only when something was collected
            rec.evidence = got
            write_atomic(inp.path, rec.to_json())
            out.stored = True
            out.notes.append(Note(f"evidence stored in {inp.path}", "detail"))
