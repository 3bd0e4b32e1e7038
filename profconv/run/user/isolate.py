"""A user's kernel in a child process with a time limit (and, with --sanitize, under compute-sanitizer).

An illegal address, a hang, a segfault or a compile error ends or spoils only the child: the parent
turns it into that kernel's FAILED row with the reason, and every other variant runs in its own
healthy CUDA context. The child's result file keeps the layers that finished before a hang or crash.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from profconv.records import struct_from
from profconv.records.facts import SanitizerFacts
from profconv.run.record import ConvResult, VariantResult
from profconv.run.user.manifest import Declaration
from profconv.run.user.worker import PROGRESS

DEFAULT_TIMEOUT_S = 600.0
SANITIZER_TOOLS = ("memcheck", "racecheck")
SANITIZER_IMAGES = 4  # compute-sanitizer slows kernels 10-100x: its pass runs on a small batch


@dataclass(frozen=True)
class KernelJob:
    kernel: str
    contract: str | None
    model: str
    images: int
    repeat: int
    warmup: int
    data: str | None = None
    weights: str | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    sanitize: bool = False  # this child runs under compute-sanitizer (no memory pool)
    # the stop-when-stable rule of `run` (gpu.StopRule): at least `repeat` samples, then on until the median's
    # 95% interval is within ±ci_target or time_budget seconds have passed; ci_target None: exactly `repeat`
    ci_target: float | None = None
    time_budget: float = 2.0
    build_dir: str | None = None  # shared by the kernel's children (checks, ncu, sanitizer): nvcc runs once
    layers_only: bool = False  # a profiler's re-run: each layer's check and timed calls, no edge shapes or forward pass
    seed: int = 0  # the fresh inputs' transforms and the edge shapes' data (0: profconv's fixed seeds)
    secret: bool = False  # the seed is --secret-seed's: kept out of the record


def prebuild(decls: list[Declaration], build_root: Path, arch: str, workers: int | None = None) -> None:
    """The nvcc builds of several host and course kernels at once, before their children run one after
    another (each child finds its library built: build.compile_library's key). A build that fails is left to
    its child, which reports the compiler's message as that kernel's FAILED row."""
    from concurrent.futures import ThreadPoolExecutor

    from profconv.run.user.contracts import UserKernel

    todo = [d for d in decls if d.error is None and d.contract in ("course", "host")]
    if len(todo) < 2:
        return

    def one(d: Declaration) -> None:
        try:
            UserKernel(d, build_root / d.name).compile_only(arch)
        except Exception:  # noqa: BLE001 - the child builds it again and says why
            pass

    with ThreadPoolExecutor(max_workers=workers or min(8, os.cpu_count() or 1)) as pool:
        list(pool.map(one, todo))


def seed_fields(secret_seed: str | None) -> dict[str, Any]:
    """KernelJob's seed fields for `--secret-seed TEXT` (none: profconv's fixed seeds, recorded)."""
    if secret_seed is None:
        return {}
    from profconv.run.user.fresh import seed_for

    return {"seed": seed_for(0, "secret", secret_seed) or 1, "secret": True}


def redact_secret(argv: list[str]) -> list[str]:
    """A command line as the record keeps it: the value of --secret-seed replaced (`--secret-seed=…` too)."""
    out, hide = [], False
    for a in argv:
        if hide:
            out.append("(secret)")
            hide = False
        elif a == "--secret-seed":
            out.append(a)
            hide = True
        elif a.startswith("--secret-seed="):
            out.append("--secret-seed=(secret)")
        else:
            out.append(a)
    return out


def worker_argv(job_file: Path) -> list[str]:
    return [sys.executable, "-m", "profconv.run.user.worker", str(job_file)]


def sanitizer_argv(tool_path: str, tool: str, argv: list[str]) -> list[str]:
    """compute-sanitizer around the worker (pure: tests check it without a GPU)."""
    extra = ["--racecheck-report", "analysis"] if tool == "racecheck" else ["--leak-check", "no"]
    return [tool_path, "--tool", tool, "--print-limit", "20", "--show-backtrace", "device", *extra, *argv]


def find_sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and Path(home, "bin", "compute-sanitizer").is_file():
            return str(Path(home, "bin", "compute-sanitizer"))
    return None


def variant_from_dict(d: dict[str, Any]) -> VariantResult:
    """The child's result file, checked like any record part (a bad one is a bug: ValueError)."""
    return struct_from(VariantResult, d)


def last_progress(log: str) -> str | None:
    found = [ln[len(PROGRESS):] for ln in log.splitlines() if ln.startswith(PROGRESS)]
    return found[-1] if found else None


def last_error_line(log: str) -> str:
    """The most telling line of a child's output: a Python exception, a CUDA error, else the last line."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip() and not ln.startswith(PROGRESS)]
    for ln in reversed(lines):
        if re.match(r"[\w.]+(Error|Exception)\b", ln) or "CUDA" in ln or "cuda" in ln:
            return ln
    return lines[-1] if lines else ""


def signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def child_env(environ: dict[str, str]) -> dict[str, str]:
    """The child's environment: this process's, unbuffered, without the NVTX injection this process's own
    CUPTI collection set (`run --profile cupti`): a child is profiled only by what wraps it (ncu sets its
    own injection; `cupti_child` its own)."""
    env = {**environ, "PYTHONUNBUFFERED": "1"}
    if "libcupti" in env.get("NVTX_INJECTION64_PATH", ""):
        del env["NVTX_INJECTION64_PATH"]
    return env


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _spawn(argv: list[str], log_path: Path, timeout: float, on_progress: Callable[[str], None]) -> tuple[int | None, str]:
    """Run argv in its own process group; (exit code, or None when killed at the time limit; its output)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                env=child_env(dict(os.environ)))
        deadline = time.monotonic() + timeout
        seen = None
        rc: int | None
        try:
            while True:
                try:
                    rc = proc.wait(timeout=0.25)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = last_progress(log_path.read_text(errors="replace"))
                if now and now != seen:
                    seen = now
                    on_progress(now)
                if time.monotonic() > deadline:
                    _kill(proc)
                    rc = None
                    break
        except BaseException:  # Ctrl-C or SIGTERM here: the kernel's process group (its own session) goes too
            _kill(proc)
            raise
    return rc, log_path.read_text(errors="replace")


def outcome(job: KernelJob, decl: Declaration, provenance: dict, rc: int | None, log: str,
            partial: dict | None) -> VariantResult:
    """The child's result, or the FAILED row its death or time-out leaves (pure: tests feed it logs)."""
    if partial is not None and rc == 0:
        return variant_from_dict(partial)
    res = variant_from_dict(partial) if partial is not None else VariantResult(
        job.images, decl.name, f"user kernel ({decl.contract})", decl.precision, user=dict(provenance))
    during = last_progress(log)
    where = f" during {during}" if during else ""
    if rc is None:
        why = f"timed out after {job.timeout:g} s{where} (a hang, or slower than --kernel-timeout)"
    else:
        said = last_error_line(log)
        tail = f": {said}" if said else ""
        why = (f"crashed ({signal_name(rc)}){where}{tail}" if rc < 0 else
               f"the child process failed (exit {rc}){where}{tail}")
    res.status, res.error = "failed", why
    layer = during.split("/")[2].split(":")[0] if during and during.count("/") >= 2 else None
    done = {c.layer for c in res.conv}
    if layer and layer not in done:
        res.conv.append(ConvResult(layer=layer, shape="", status="failed", error=why))
    _facts_of_a_death(res, decl, job, layer, why, during)
    return res


def _facts_of_a_death(res: VariantResult, decl: Declaration, job: KernelJob, layer: str | None, why: str,
                      during: str | None) -> None:
    """The facts a dead or hung child leaves: those it wrote, the layer (or edge shape) it died on, why."""
    from profconv.records.facts import EdgeFacts, HarnessFacts, KernelFacts, LayerFacts
    from profconv.run.user.facts import form_facts

    if res.facts is None:
        res.facts = KernelFacts(form=form_facts(decl), harness=HarnessFacts(images=job.images))
    f = res.facts
    if layer and f.layer(layer) is None:
        f.layers.append(LayerFacts(layer=layer, shape="", error=why))
    elif layer is None and during and during.endswith("edge shapes"):
        f.edges.append(EdgeFacts(layer="", shape="", seed_index=0, error=why))
    f.legacy_status, f.legacy_error = res.status, res.error


FINDING = re.compile(r"(Invalid |Error: |Warning: |Race reported|Misaligned|Out-of-range|Program hit|Barrier error|"
                     r"Malloc/Free|Uninitialized)")
# "conv+0x1b0 in /tmp/x/kern.cu:11" or "0x1b0 in /tmp/x/kern.cu:11:conv(float *, ...)": where an access is
WHERE = re.compile(r"(?:(?P<fn>[\w:~<>]+)\+)?0x[0-9a-fA-F]+ in (?P<file>\S+?\.cuh?):(?P<line>\d+)"
                   r"(?::(?P<fn2>[\w:~<>]+)(?:\([^)]*\))?)?")
# the names CuPy gives NVRTC for a RawModule's source: '<md5>_2.cubin.cu' (kernel cache) or 'kern.cu'
NVRTC_FILE = re.compile(r"(kern|\w+\.cubin)\.cu")


def _where(text: str, source: str | None) -> str:
    """'conv+0x1b0 in /tmp/x/kern.cu:11' -> 'k.cu:11 (conv)', the file named as the user knows it: their
    source for NVRTC's or the build copy's name, else the file's own name (a generated driver, a shim)."""
    def repl(m: re.Match) -> str:
        name = Path(m["file"]).name
        shown = source if source and (name == Path(source).name or NVRTC_FILE.fullmatch(name)) else name
        fn = m["fn"] or m["fn2"]
        return f"{shown}:{m['line']}" + (f" ({fn})" if fn else "")

    return WHERE.sub(repl, text)


HAZARDS = re.compile(r"\s*\[([\d,]+) hazards?\]$")


def _compact(parts: list[str]) -> str:
    """A finding's lines as one: the other sides of a race that name the same source line (several
    instructions of one statement) are one, their hazard counts summed."""
    head: list[str] = []
    seen: dict[str, int] = {}
    for p in parts:
        m = HAZARDS.search(p)
        key = HAZARDS.sub("", p)
        if m and key in seen:
            seen[key] += int(m.group(1).replace(",", ""))
        elif m:
            seen[key] = int(m.group(1).replace(",", ""))
            head.append(key)
        elif p not in head:
            head.append(p)
    return " ".join(f"{p} [{seen[p]:,} hazards]" if p in seen else p for p in head)


def parse_sanitizer(text: str, source: str | None = None, limit: int = 8) -> dict[str, Any]:
    """compute-sanitizer's report as {errors, warnings, findings, complete}: findings are one line each
    ("Invalid __global__ read of size 4 bytes at k.cu:17 (conv)", "Error: Race reported between Write
    access at k.cu:20 (conv) and Read access at k.cu:24 (conv) [128 hazards]"), errors first, with the
    user's `source` for the compiled copy's file name. complete: the tool printed its summary."""
    errors = warnings = None
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    if m:
        errors = int(m.group(1))
    m = re.search(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?", text)
    if m:
        errors, warnings = int(m.group(1)), int(m.group(2))
    found: list[tuple[bool, str]] = []  # (is a warning, text)
    hazards: dict[tuple[bool, str], int] = {}
    lines = [ln.removeprefix("=========").strip() for ln in text.splitlines() if ln.startswith("=========")]
    for i, ln in enumerate(lines):
        if not FINDING.match(ln) or "SUMMARY" in ln:
            continue
        parts = [ln]
        for nx in lines[i + 1:]:  # its continuation: where (at ...), the other sides of a race (and ...)
            if nx.startswith(("at ", "and ")):
                parts.append(nx)
            elif not nx or FINDING.match(nx) or len(parts) > 1:
                break
        item = _compact([_where(p, source) for p in parts])
        m = HAZARDS.search(item)
        entry = (ln.startswith("Warning"), HAZARDS.sub("", item))
        if entry not in found:
            found.append(entry)
        if m:  # the same race reported from several instructions: one finding, the hazards summed
            hazards[entry] = hazards.get(entry, 0) + int(m.group(1).replace(",", ""))
    found = [(w, f"{t} [{hazards[(w, t)]:,} hazards]" if (w, t) in hazards else t) for w, t in found]
    found.sort(key=lambda e: e[0])  # errors first
    n_warn = sum(w for w, _ in found)
    return {"errors": errors if errors is not None else len(found) - n_warn,
            "warnings": warnings if warnings is not None else n_warn,
            "findings": [t for _, t in found][:limit], "complete": errors is not None}


def sanitizer_verdict(report: dict[str, Any]) -> tuple[str | None, list[str]]:
    """What --sanitize makes of compute-sanitizer's findings: (the kernel's FAILED reason or None, notes).

    Any memcheck error (an out-of-bounds or misaligned access, even one whose stray value did not
    reach the output) and any racecheck hazard of severity Error (a shared-memory race: the output
    depends on how warps happen to be scheduled, so a correct result on this run proves nothing)
    FAILS the kernel, with the count and the first finding's source line. Racecheck warnings (hazards
    the tool itself grades as likely benign) and a sanitizer pass that could not finish are notes."""
    if "error" in report:
        return None, [f"--sanitize: {report['error']}"]
    failures, notes = [], []
    for tool, r in report.items():
        if r.get("errors"):
            first = f": {r['findings'][0]}" if r.get("findings") else ""
            what = "hazard(s)" if tool == "racecheck" else "error(s)"
            failures.append(f"compute-sanitizer {tool}: {r['errors']} {what}{first}")
        elif r.get("warnings"):
            warn = next((f for f in r.get("findings", []) if f.startswith("Warning")), "")
            notes.append(f"compute-sanitizer {tool}: {r['warnings']} warning(s)" + (f": {warn}" if warn else ""))
        if r.get("run_error"):
            notes.append(f"compute-sanitizer {tool} did not finish: {r['run_error']}")
        elif not r.get("complete") and not r.get("errors"):
            notes.append(f"compute-sanitizer {tool} printed no summary (its findings may be incomplete)")
    return ("; ".join(failures) or None), notes


def note(res: VariantResult, text: str) -> None:
    """A remark on a user kernel's run that is not a failure (a profiler that could not cover it, a
    racecheck warning): kept in the record (`user.notes`) and listed under the run's tables."""
    res.user = dict(res.user or {})
    res.user["notes"] = [*res.user.get("notes", []), text]


def run_isolated(decl: Declaration, provenance: dict, job: KernelJob, on_progress: Callable[[str], None],
                 sanitize: bool = False, wrap: Callable[[list[str]], list[str]] | None = None) -> VariantResult:
    """One user kernel, checked and timed in a child process; FAILED rows for whatever killed it.
    `wrap` turns the child's command line into the one started (a profiler around it: `run --profile`).
    A kernel that could not be recognised (`decl.error`) is its FAILED row at once."""
    if decl.error:
        from profconv.run.user import facts

        return facts.unrecognised(decl, job.images, provenance)
    with tempfile.TemporaryDirectory(prefix=f"profconv-{decl.name}-") as tmp:
        res = _child(decl, provenance, job, Path(tmp), on_progress, "run", wrap=wrap)
        if sanitize:
            res.user = dict(res.user or provenance)
            res.user["sanitizer"] = sanitizer_pass(decl, provenance, job, Path(tmp), on_progress)
            failure, notes = sanitizer_verdict(res.user["sanitizer"])
            for text in notes:
                note(res, text)
            if failure and res.status != "skipped":
                res.status = "failed"
                res.error = f"{res.error}; {failure}" if res.error else failure
            if res.facts is not None:
                res.facts.sanitizer = sanitizer_facts(res.user["sanitizer"])
                res.facts.legacy_status, res.facts.legacy_error = res.status, res.error
    return res


def sanitizer_facts(report: dict[str, Any]) -> list[SanitizerFacts]:
    """compute-sanitizer's findings per tool, as facts (the tool's own report stays in `user.sanitizer`)."""
    if "error" in report:
        return []
    return [SanitizerFacts(tool=tool, errors=int(r.get("errors") or 0), warnings=int(r.get("warnings") or 0),
                           findings=list(r.get("findings", [])), complete=bool(r.get("complete")),
                           run_error=r.get("run_error"))
            for tool, r in report.items() if isinstance(r, dict)]


def run_under(decl: Declaration, provenance: dict, job: KernelJob, on_progress: Callable[[str], None],
              wrap: Callable[[list[str]], list[str]], tag: str) -> tuple[VariantResult, str]:
    """The kernel's child started through `wrap` (a profiler such as ncu around it): its result and the
    whole output of the command (the tool's report included)."""
    with tempfile.TemporaryDirectory(prefix=f"profconv-{decl.name}-") as tmp:
        res = _child(decl, provenance, job, Path(tmp), on_progress, tag, wrap=wrap)
        return res, (Path(tmp) / f"{tag}.log").read_text(errors="replace")


def _child(decl: Declaration, provenance: dict, job: KernelJob, tmp: Path, on_progress: Callable[[str], None],
           tag: str, wrap: Callable[[list[str]], list[str]] | None = None) -> VariantResult:
    result = tmp / f"{tag}-result.json"
    job_file = tmp / f"{tag}-job.json"
    job_file.write_text(json.dumps({**asdict(job), "result": str(result), "build_dir": job.build_dir or str(tmp / "build")}))
    argv = worker_argv(job_file)
    rc, log = _spawn(wrap(argv) if wrap else argv, tmp / f"{tag}.log", job.timeout, on_progress)
    partial = None
    if result.is_file():
        try:
            partial = json.loads(result.read_text())
            variant_from_dict(partial)
        except (json.JSONDecodeError, ValueError):
            partial = None  # half a file cannot happen (atomic writes); a malformed one is treated as none
    res = outcome(job, decl, provenance, rc, log, partial)
    res.user = res.user or dict(provenance)
    if tag != "run":
        res.user["log_tail"] = log[-20000:]
    return res


def sanitizer_pass(decl: Declaration, provenance: dict, job: KernelJob, tmp: Path,
                   on_progress: Callable[[str], None]) -> dict[str, Any]:
    tool_path = find_sanitizer()
    if tool_path is None:
        return {"error": "compute-sanitizer not found (it ships with the CUDA toolkit)"}
    out: dict[str, Any] = {}
    small = replace(job, images=min(job.images, SANITIZER_IMAGES), repeat=1, warmup=0, timeout=job.timeout * 4,
                    sanitize=True, ci_target=None)
    for tool in SANITIZER_TOOLS:
        on_progress(f"{decl.name}: compute-sanitizer {tool}")
        def wrap(argv: list[str], tool: str = tool) -> list[str]:
            return sanitizer_argv(tool_path, tool, argv)

        res = _child(decl, provenance, small, tmp, on_progress, tool, wrap=wrap)
        log = (tmp / f"{tool}.log").read_text(errors="replace")  # whole: the findings come before the summary
        out[tool] = parse_sanitizer(log, str(decl.source) if decl.source else None)
        # the tool's own lines (its findings in full, its summary), kept with the record
        out[tool]["report"] = "\n".join(ln for ln in log.splitlines() if ln.startswith("========="))[-8000:]
        if res.status == "failed" and (res.error or "").startswith(("timed out", "crashed", "the child process")):
            out[tool]["run_error"] = res.error  # the tool's own run ended early (its findings so far are kept)
    return out
