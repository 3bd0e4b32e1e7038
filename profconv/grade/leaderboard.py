"""Job results and their run records -> the leaderboard's DataFrames (pure but for reading run.json).

`layers(results)` -- one row per job x conv layer of the submission's kernel (a job without a
usable record keeps one row with layer = None: no submission is ever dropped):

  submission  str     the submission's name
  model       str     the model run
  run         int     which repeat run (--runs N: 1..N)
  gpu         str     the GPU the job ran on (None when it never reached one)
  device      str     which one: its CUDA_VISIBLE_DEVICES index ("host:index" when the jobs ran on
                      several hosts)
  status      str     the job's end (jobs.STATUSES)
  verdict     str     ok | FAILED | skipped | timeout | crashed | error | unplaced | lost
  reason      str     why, for anything but ok (one line)
  kernel      str     the kernel's variant name in the run record
  layer       str     conv layer (conv1, ...)
  op_time_s   float   the kernel's Op Time on the layer (median of the timed repeats)
  cudnn_s     float   the reference's (cuDNN) Op Time on the same layer in the same job
  op_low_s, op_high_s, cudnn_low_s, cudnn_high_s
              float   the 95% intervals of those two medians (NaN when too few samples for one)
  vs_cudnn    float   op_time_s / cudnn_s (below 1: faster than cuDNN)
  vs_median   float   op_time_s / the median Op Time of the correct submissions on the same
                      model, GPU and layer
  correctness float   the model's accuracy with the kernel (the course's "Correctness")
  wall_s      float   the job's wall time on its GPU (its process's start to end)
  started, ended str  when the job's process started and ended (ISO 8601)
  report      str     the submission's own report.md (None if not written)
  record      str     its run.json
  rule        str     the id of the course rule that decided the verdict (judge/; None when ok or not judged)
  course      str     the rule set the kernel was judged by (sp25, minidnn, profconv, ...)
  optimisations str   the optimisations seen in the kernel's SASS and launches ('TC tf32, smem tiling')
  outside     str     the GPU work outside the timed call ('prolog: 1 kernel (k)'; '—' none; None unknown)
  warnings    str     the verdict's warnings, '; '-joined (edge shapes in course terms, partial credit)

`board(layers)` -- one row per submission x model, ranked by total Op Time among correct ones:
  rank (NA unless ok), submission, model, gpu, device, verdict, reason, kernel, op_<layer> per
  layer, total_s, cudnn_total_s, correctness, wall_s, started, ended, report, record, rule, course,
  optimisations, outside, warnings, vs_cudnn,
  vs_cudnn_low, vs_cudnn_high (the ratio's range over both totals' 95% intervals: the sums of the
  per-layer bounds; NaN when a layer lacks an interval), vs_median, and the repeat runs (--runs,
  `combine_runs`): runs, runs_ok, total_min_s, total_max_s, spread ((max - min) / total).

`with_previous(board, previous)` -- adds previous_total_s and vs_previous (total_s over the same
submission's total on the same model in an earlier grade directory: another milestone).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from profconv.grade.jobs import JobResult

JUDGED = ["rule", "course", "optimisations", "outside", "warnings"]
LAYER_COLUMNS = ["submission", "model", "run", "gpu", "device", "status", "verdict", "reason", "kernel", "layer",
                 "op_time_s", "cudnn_s", "op_low_s", "op_high_s", "cudnn_low_s", "cudnn_high_s", "vs_cudnn",
                 "vs_median", "correctness", "wall_s", "started", "ended", "report", "record", *JUDGED]
_NUMERIC = ["op_time_s", "cudnn_s", "op_low_s", "op_high_s", "cudnn_low_s", "cudnn_high_s", "correctness", "wall_s"]


def _builtin_names() -> set[str]:
    from profconv.run.variants import VARIANTS

    return {v.name for v in VARIANTS}


def is_user_row(row: dict[str, Any], builtin: set[str]) -> bool:
    """A result row of the user's kernel: marked as such by `profconv run --kernel`, or (older records
    and --job-command runs) any variant that is not one of profconv's own."""
    for key in ("user", "user_kernel", "is_user"):
        if key in row:
            return bool(row[key])
    if row.get("kind") is not None or row.get("origin") is not None:
        return "user" in (row.get("kind"), row.get("origin"))
    return row.get("variant") not in builtin


def _largest(rows: list[dict[str, Any]]) -> int | None:
    counts = [int(r["images"]) for r in rows if isinstance(r.get("images"), int)]
    return max(counts) if counts else None


def read_record(path: str | None) -> dict[str, Any] | str | None:
    """A job's run record as checked builtins (schema version checked, upgraded, validated), the one
    line saying why it is unusable, or None when the job wrote none."""
    if not path:
        return None
    from profconv.errors import InputError
    from profconv.records.base import read, to_builtins
    from profconv.records.run import RunRecord

    try:
        doc = to_builtins(read(Path(path), RunRecord))
    except InputError as exc:
        return str(exc)
    # fields the typed model does not know yet (a newer profconv run's) are kept from the raw JSON
    try:
        raw = json.loads(Path(path).read_text())
        for row, raw_row in zip(doc["results"], raw.get("results", [])):
            for key, value in raw_row.items():
                row.setdefault(key, value)
    except (OSError, ValueError, AttributeError):
        pass
    return doc


def _op(conv: dict[str, Any], key: str = "median_s") -> float | None:
    t = conv.get("op_time") or {}
    v = t.get(key)
    return float(v) if isinstance(v, (int, float)) else None


def _interval(conv: dict[str, Any] | None) -> tuple[float | None, float | None]:
    return (None, None) if conv is None else (_op(conv, "ci_low_s"), _op(conv, "ci_high_s"))


def job_rows(result: JobResult, record: dict[str, Any] | str | None, reference: str = "cudnn",
             builtin: set[str] | None = None) -> list[dict[str, Any]]:
    """The leaderboard rows of one job (pure: the record is already read; a str is why it is unusable)."""
    base = {"submission": result.submission, "model": result.model, "run": result.run, "gpu": result.gpu,
            "device": result.visible_devices or None, "status": result.status,
            "verdict": result.status if result.status != "finished" else "error", "reason": result.reason,
            "kernel": None, "layer": None, "op_time_s": None, "cudnn_s": None, "op_low_s": None, "op_high_s": None,
            "cudnn_low_s": None, "cudnn_high_s": None, "correctness": None, "wall_s": result.wall_s,
            "started": result.started, "ended": result.ended, "report": result.report, "record": result.record,
            **dict.fromkeys(JUDGED)}
    if result.status != "finished":
        return [base]
    if record is None:
        return [{**base, "reason": "the job finished but left no run.json"}]
    if isinstance(record, str):
        return [{**base, "reason": record}]
    builtin = _builtin_names() if builtin is None else builtin
    rows = [r for r in record["results"] if isinstance(r, dict)]
    images = _largest(rows)
    rows = [r for r in rows if r.get("images") == images]
    ref = {c.get("layer"): c for r in rows if r.get("variant") == reference and r.get("status") == "ok"
           for c in r.get("conv", []) if c.get("status") == "ok"}
    # the model's conv layers: a kernel stopped in its forward pass leaves a failed entry named after
    # that stage ("forward"); its reason is the row's, it is no layer column
    model = record.get("model")
    if not isinstance(model, dict):
        model = {}
    known = {c.get("layer") for c in model.get("conv_layers") or [] if isinstance(c, dict)}
    users = [r for r in rows if r.get("variant") != reference and is_user_row(r, builtin)]
    if not users:
        return [{**base, "reason": "the run record has no result row for the submission's kernel"}]
    out = []
    for r in users:
        status = str(r.get("status", "failed"))
        verdict = {"ok": "ok", "skipped": "skipped"}.get(status, "FAILED")
        every = r.get("conv") or []
        convs = [c for c in every if c.get("layer") in known] if known else every
        failed_conv = next((c for c in every if c.get("status") != "ok"), None)
        if verdict == "ok" and failed_conv is not None:
            verdict = "FAILED"
        reason = None if verdict == "ok" else (r.get("error") or (failed_conv or {}).get("error") or status)
        base_r = {**base, **judged(r.get("verdict"))}
        if not convs:
            out.append({**base_r, "verdict": verdict, "reason": reason, "kernel": r.get("variant"),
                        "correctness": r.get("correctness")})
        for c in convs:
            ok = verdict == "ok"
            rc = ref.get(c.get("layer"))
            lo, hi = _interval(c) if ok else (None, None)
            rlo, rhi = _interval(rc)
            out.append({**base_r, "verdict": verdict, "reason": reason, "kernel": r.get("variant"),
                        "layer": c.get("layer"), "op_time_s": _op(c) if ok else None,
                        "cudnn_s": _op(rc) if rc is not None else None, "op_low_s": lo, "op_high_s": hi,
                        "cudnn_low_s": rlo, "cudnn_high_s": rhi,
                        "correctness": r.get("correctness") if ok else None})
    return out


def judged(verdict: Any) -> dict[str, Any]:
    """The leaderboard's view of a result's verdict (the run record's dict): the deciding rule, the rule set,
    the optimisations seen, the work outside the timed call, the warnings; all None when not judged."""
    if not isinstance(verdict, dict):
        return dict.fromkeys(JUDGED)
    import msgspec

    from profconv.judge import text
    from profconv.records.verdict import Verdict

    try:
        v = msgspec.convert(verdict, Verdict)
    except msgspec.ValidationError:
        return dict.fromkeys(JUDGED)
    return {"rule": v.rule.id if v.rule else None, "course": v.course, "optimisations": text.optimisations(v),
            "outside": text.outside(v) or None, "warnings": "; ".join(v.warnings) or None}


def layers(results: list[JobResult], reference: str = "cudnn") -> pd.DataFrame:
    """All jobs' rows with the ratios to cuDNN and to the class median (see the module docstring)."""
    builtin = _builtin_names()
    rows = [row for res in results for row in job_rows(res, read_record(res.record), reference, builtin)]
    df = pd.DataFrame(rows, columns=[c for c in LAYER_COLUMNS if c not in ("vs_cudnn", "vs_median")])
    for c in _NUMERIC:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    hosts = {h for h in (res.host for res in results) if h}
    if len(hosts) > 1:  # a device index names a GPU only together with its host
        by_key = {(res.submission, res.model): res.host for res in results}
        df["device"] = [f"{by_key.get((s, m))}:{d}" if isinstance(d, str) else d
                        for s, m, d in zip(df["submission"], df["model"], df["device"])]
    df["vs_cudnn"] = df["op_time_s"] / df["cudnn_s"]
    ok = df[(df["verdict"] == "ok") & df["op_time_s"].notna()]
    med = ok.groupby(["model", "gpu", "layer"], dropna=False)["op_time_s"].median().rename("median_s")
    df = df.join(med, on=["model", "gpu", "layer"])
    df["vs_median"] = df["op_time_s"] / df["median_s"]
    return df[LAYER_COLUMNS].reset_index(drop=True)


def board(lay: pd.DataFrame, combine: str = "best") -> pd.DataFrame:
    """One row per submission x model (and kernel): per-layer Op Times, totals, ratios, the rank; the
    repeat runs of a submission (--runs) combined as `combine` says (`combine_runs`)."""
    per_run = _per_run(lay)
    return _ranked(combine_runs(per_run, combine))


def _per_run(lay: pd.DataFrame) -> pd.DataFrame:
    """One row per submission x model x kernel x run."""
    keys = ["submission", "model", "kernel", "run"]
    layer_names = [x for x in dict.fromkeys(lay["layer"].dropna())]
    rows = []
    for (sub, model, kernel, run), g in lay.groupby(keys, dropna=False, sort=False):
        first = g.iloc[0]
        verdict = "ok" if (g["verdict"] == "ok").all() else next(v for v in g["verdict"] if v != "ok")
        row: dict[str, Any] = {"submission": sub, "model": model, "run": run, "gpu": first["gpu"], "device": first["device"],
                               "verdict": verdict,
                               "reason": next((r for r in g["reason"] if isinstance(r, str) and r), None),
                               "kernel": kernel if isinstance(kernel, str) else None}
        for name in layer_names:
            hit = g[g["layer"] == name]["op_time_s"]
            row[f"op_{name}"] = float(hit.iloc[0]) if len(hit) and pd.notna(hit.iloc[0]) else None
        ok = verdict == "ok" and g["op_time_s"].notna().all() and g["layer"].notna().all()
        row["total_s"] = float(g["op_time_s"].sum()) if ok else None
        row["cudnn_total_s"] = float(g["cudnn_s"].sum()) if ok and g["cudnn_s"].notna().all() else None
        bounds = g[["op_low_s", "op_high_s", "cudnn_low_s", "cudnn_high_s"]]
        known = ok and row["cudnn_total_s"] is not None and bool(bounds.notna().all().all())
        row["vs_cudnn_low"] = float(bounds["op_low_s"].sum() / bounds["cudnn_high_s"].sum()) if known else None
        row["vs_cudnn_high"] = float(bounds["op_high_s"].sum() / bounds["cudnn_low_s"].sum()) if known else None
        row["correctness"] = first["correctness"] if ok else None
        row["wall_s"] = first["wall_s"]
        row["started"], row["ended"] = first["started"], first["ended"]
        row["report"], row["record"] = first["report"], first["record"]
        row.update({k: first[k] if isinstance(first[k], str) else None for k in JUDGED})
        rows.append(row)
    cols = ["submission", "model", "run", "gpu", "device", "verdict", "reason", "kernel",
            *[f"op_{n}" for n in layer_names], "total_s", "cudnn_total_s", "vs_cudnn_low", "vs_cudnn_high",
            "correctness", "wall_s", "started", "ended", "report", "record", *JUDGED]
    df = pd.DataFrame(rows, columns=cols)
    for c in [*[f"op_{n}" for n in layer_names], "total_s", "cudnn_total_s", "vs_cudnn_low", "vs_cudnn_high",
              "correctness", "wall_s"]:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    return df


COMBINE = ("best", "mean")
_RUNS = ["runs", "runs_ok", "total_min_s", "total_max_s", "spread"]


def combine_runs(per_run: pd.DataFrame, how: str = "best") -> pd.DataFrame:
    """The repeat runs of each submission x model as one row, as the course combines them:
      best  the run with the least total Op Time (its per-layer times, its report and record)
      mean  the mean of the runs' per-layer times, totals and Correctness (the first run's report)
    ok only when every run is ok (a kernel wrong on one run of N is wrong); otherwise the first failing
    run's verdict and reason. Added: runs, runs_ok, total_min_s, total_max_s and spread = (max - min) /
    the combined total (0 for one run; NaN when not ok). Pure."""
    if how not in COMBINE:
        raise ValueError(f"combine takes {' or '.join(COMBINE)}, not {how!r}")
    ops = [c for c in per_run.columns if c.startswith("op_")]
    means = [*ops, "total_s", "cudnn_total_s", "vs_cudnn_low", "vs_cudnn_high", "correctness"]
    rows = []
    for _, g in per_run.groupby(["submission", "model", "kernel"], dropna=False, sort=False):
        g = g.sort_values("run", kind="stable")
        ok = g[(g["verdict"] == "ok") & g["total_s"].notna()]
        if len(ok) < len(g):
            row = g[g["verdict"] != "ok"].iloc[0].copy() if (g["verdict"] != "ok").any() else g.iloc[0].copy()
            row["total_min_s"] = row["total_max_s"] = row["spread"] = float("nan")
        else:
            row = ok.loc[ok["total_s"].idxmin()].copy() if how == "best" else ok.iloc[0].copy()
            if how == "mean":
                for c in means:
                    row[c] = float(ok[c].mean()) if ok[c].notna().all() else float("nan")
            row["total_min_s"], row["total_max_s"] = float(ok["total_s"].min()), float(ok["total_s"].max())
            row["spread"] = (row["total_max_s"] - row["total_min_s"]) / row["total_s"]
        row["runs"], row["runs_ok"] = len(g), len(ok)
        rows.append(row)
    out = pd.DataFrame(rows, columns=[*per_run.columns, *_RUNS]).reset_index(drop=True)
    return out.drop(columns="run")


def _ranked(df: pd.DataFrame) -> pd.DataFrame:
    """Ratios to cuDNN and to the class median, the order (ok first, fastest first), the rank per model."""
    df = df.copy()
    for c in ["runs", "runs_ok"]:
        df[c] = pd.to_numeric(df[c]).astype("Int64")
    for c in ["total_min_s", "total_max_s", "spread"]:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    runs = df[_RUNS]
    df = df.drop(columns=_RUNS)
    df["vs_cudnn"] = df["total_s"] / df["cudnn_total_s"]
    low, high = df.pop("vs_cudnn_low"), df.pop("vs_cudnn_high")
    df["vs_cudnn_low"], df["vs_cudnn_high"] = low, high
    med = df.groupby(["model", "gpu"], dropna=False)["total_s"].transform("median")
    df["vs_median"] = df["total_s"] / med
    for c in _RUNS:  # after the ratios: the columns a board had before repeat runs keep their places
        df[c] = runs[c]
    order = {"ok": 0, "FAILED": 1, "skipped": 2, "error": 3, "timeout": 4, "crashed": 5, "unplaced": 6, "lost": 7,
             "capped": 8}
    df["_o"] = df["verdict"].map(order).fillna(9)
    df = df.sort_values(["model", "_o", "total_s", "submission"], kind="stable", na_position="last")
    df = df.drop(columns="_o").reset_index(drop=True)
    rank = pd.Series(pd.NA, index=df.index, dtype="Int64")
    ranked = df[(df["verdict"] == "ok") & df["total_s"].notna()]
    rank[ranked.index] = ranked.groupby("model", sort=False).cumcount() + 1
    df.insert(0, "rank", rank)
    return df


HOST_BOUND_S = 200e-6
"""Below this reference Op Time, the tens of microseconds of launch and PyTorch host time inside the
CUDA events are a large, load-dependent part of it (ece408-high conv1 at 100 images: about 10 us
of cuDNN kernel in a 45-100 us Op Time on an H100)."""


def host_bound_note(board: pd.DataFrame) -> str | None:
    """A warning when the reference's Op Time is too short for x cuDNN to compare kernels."""
    ref = board["cudnn_total_s"].dropna()
    if ref.empty or float(ref.median()) >= HOST_BOUND_S:
        return None
    return (f"cuDNN's Op Time here is {float(ref.median()) * 1e6:.0f} us (median of the jobs, "
            f"{float(ref.min()) * 1e6:.0f}-{float(ref.max()) * 1e6:.0f} us): at this size launch and PyTorch host "
            "time are much of it, so x cuDNN measures them more than the kernels; grade with more images "
            "(--images 10000, the default) for a ratio of the kernels")


def with_previous(current: pd.DataFrame, previous: pd.DataFrame) -> pd.DataFrame:
    """The board with each submission's total from an earlier milestone and the ratio to it."""
    prev = previous[previous["verdict"] == "ok"].drop_duplicates(["submission", "model"])
    prev = prev.set_index(["submission", "model"])["total_s"].rename("previous_total_s")
    out = current.join(prev, on=["submission", "model"])
    out["vs_previous"] = out["total_s"] / out["previous_total_s"]
    return out
