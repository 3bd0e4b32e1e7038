"""`analysis.runs.conv_speedups`: the run command's table as data (each conv layer's Op Time, its speedup
over naive and over the cuDNN it is compared with), and `commands.run.result_table` drawing it."""

from __future__ import annotations

import copy
import io
import json
import math
from pathlib import Path

import pytest
from rich.console import Console

from profconv.analysis.runs import CONV_COLUMNS, conv_speedups
from profconv.commands.run import result_table
from profconv.records import load, load_doc

LADDER = Path(__file__).parent / "data" / "runs" / "ece408-high-h200-full-ladder.json"


def _doc() -> dict:
    return json.loads(LADDER.read_text())


def _scaled(doc: dict, variant: str, name: str, precision: str, factor: float) -> dict:
    """A copy of `variant`'s result named `name`, its times multiplied by `factor`."""
    r = copy.deepcopy(next(r for r in doc["results"] if r["variant"] == variant))
    r["variant"], r["precision"] = name, precision
    for c in r["conv"]:
        t = c["op_time"]
        for k in ("median_s", "min_s", "max_s"):
            t[k] *= factor
        t["samples_s"] = [s * factor for s in t["samples_s"]]
    return r


def _row(df, variant: str) -> dict:
    rows = df[df["variant"] == variant].to_dict("records")
    assert len(rows) == 1
    return rows[0]


def test_the_ladder_record_as_data():
    df = conv_speedups(load(LADDER))
    assert list(df.columns) == CONV_COLUMNS
    assert list(df["variant"]) == ["cpu", "naive", "shared", "constant", "unroll-gemm", "fused", "tuned", "fp16",
                                   "tensorcore", "e2e", "streams", "cudnn", "cudnn-fp16"]
    tuned = _row(df, "tuned")
    assert tuned["median_s"] == 0.00047968000173568724 and tuned["n"] == 5 and tuned["cudnn"] == "cudnn"
    assert tuned["vs_naive"] == pytest.approx(0.00725216007232666 / 0.00047968000173568724)  # 15.12
    assert tuned["vs_cudnn"] == pytest.approx(0.0013437119722366333 / 0.00047968000173568724)  # 2.801
    assert _row(df, "tensorcore")["cudnn"] == "cudnn-fp16"  # fp16 rows: against cuDNN in fp16
    streams = _row(df, "streams")  # its reference is e2e, no cuDNN: nothing under "vs cuDNN" (was 0.998x vs e2e)
    assert streams["cudnn"] is None or streams["cudnn"] != streams["cudnn"]
    assert math.isnan(streams["vs_cudnn"])
    cpu = _row(df, "cpu")
    assert math.isnan(cpu["vs_cudnn"]) and cpu["vs_naive"] == pytest.approx(0.00725216007232666 / 1.8831609970000045)
    assert _row(df, "cudnn")["vs_cudnn"] == 1.0 and _row(df, "naive")["vs_naive"] == 1.0


def test_the_fastest_peer_of_the_rows_precision_any_layout():
    doc = _doc()
    doc["results"] += [_scaled(doc, "cudnn", "cudnn-nhwc", "fp32", 0.5),  # the faster fp32 peer
                       _scaled(doc, "cudnn", "cudnn-tf32", "tf32", 0.25),  # faster, but not fp32 arithmetic
                       _scaled(doc, "tuned", "tensorcore-tf32", "tf32", 0.5)]
    df = conv_speedups(load_doc(doc, "ladder+peers"))
    tuned = _row(df, "tuned")
    assert tuned["cudnn"] == "cudnn-nhwc"
    assert tuned["vs_cudnn"] == pytest.approx(0.0013437119722366333 * 0.5 / 0.00047968000173568724)  # 1.401
    assert _row(df, "tensorcore-tf32")["cudnn"] == "cudnn-tf32"
    assert _row(df, "cudnn")["cudnn"] == "cudnn-nhwc" and _row(df, "cudnn")["vs_cudnn"] == pytest.approx(0.5)
    assert _row(df, "cudnn-tf32")["cudnn"] == "cudnn-tf32" and _row(df, "cudnn-tf32")["vs_cudnn"] == 1.0


def test_failed_untimed_and_zero_times_give_no_speedup():
    doc = _doc()
    by = {r["variant"]: r for r in doc["results"]}
    by["shared"]["conv"][0].update(status="failed", error="relative error 0.5")
    by["naive"]["conv"][0]["op_time"]["median_s"] = 0.0  # no base: nothing to divide by
    by["constant"]["conv"][0]["op_time"] = None
    by["cudnn"]["status"] = "skipped"
    by["cudnn"]["conv"] = []
    df = conv_speedups(load_doc(doc, "damaged"))
    shared = _row(df, "shared")
    assert shared["status"] == "failed" and math.isnan(shared["vs_naive"]) and math.isnan(shared["vs_cudnn"])
    assert math.isnan(_row(df, "tuned")["vs_naive"])  # naive's 0 s
    constant = _row(df, "constant")
    assert math.isnan(constant["median_s"]) and constant["n"] == 0 and math.isnan(constant["vs_naive"])
    assert "cudnn" not in set(df["variant"])  # skipped: left out
    tuned = _row(df, "tuned")
    assert tuned["cudnn"] is None or not isinstance(tuned["cudnn"], str)  # no fp32 peer ran
    assert math.isnan(tuned["vs_cudnn"])


def test_result_table_draws_the_frame():
    buf = io.StringIO()
    Console(file=buf, width=250, color_system=None).print(result_table(load(LADDER), 250))
    lines = buf.getvalue().splitlines()
    assert lines[1].split() == ["images", "variant", "layer", "Op", "Time", "min", "n", "vs", "naive", "vs", "cuDNN¹",
                                "rel.", "error", "Correctness", "status"]  # no interval in this record: no ±
    tuned = next(line for line in lines if " tuned " in line)
    assert tuned.split() == ["10000", "tuned", "conv1", "479.7", "µs", "471", "µs", "5", "15.1x", "2.8x", "9.30e-08",
                             "0.8398", "ok"]
    streams = next(line for line in lines if " streams " in line)
    assert streams.split()[-5:-3] == ["0.326x", "—"]  # vs naive; vs cuDNN: none (its reference is e2e)
    assert lines[-1].strip() == "¹ speedup over the fastest cuDNN of the same precision in this run (any layout)"
