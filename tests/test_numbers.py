"""Numbers you can defend, without a GPU: the median's interval, stop-when-stable, cold/warm pairs
that do not depend on the company, the compare decision, the agreement table, provenance."""

import hashlib
import json
import subprocess
import warnings
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from profconv.analysis import agreement, stats
from profconv.errors import InputError
from tests.conftest import terminal_console


def test_median_ci_order_statistics():
    xs = [float(i) for i in range(1, 11)]  # n = 10: x(2) .. x(9), coverage 97.9%
    assert stats.median_ci(xs) == (2.0, 9.0)
    assert stats.median_ci(xs[:5]) is None  # 5 samples cannot bracket the median at 95%
    assert stats.median_ci(list(range(1, 7))) == (1, 6)
    assert stats.ci_rel([1.0] * 10) == 0.0
    assert stats.ci_rel(xs) == pytest.approx((9 - 2) / 2 / 5.5)
    assert stats.stable([1.0, 1.001, 0.999, 1.0, 1.0, 1.002, 0.998, 1.0], 0.01)
    assert not stats.stable([1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0], 0.01)


def test_compare_samples_needs_significance_and_effect():
    a = [1.00, 1.01, 0.99, 1.005, 1.02]
    d = stats.compare_samples(a, [x * 1.5 for x in a])
    assert d.verdict == "regression" and d.p_value == pytest.approx(2 / 252) and d.ratio == pytest.approx(1.5)
    d = stats.compare_samples(a, [x * 1.02 for x in a])  # significant but below the minimum effect
    assert d.verdict == "same" and "< 5%" in d.why
    d = stats.compare_samples([1.0, 2.0, 1.0, 2.0, 1.0], [1.1, 2.1, 1.1, 2.1, 1.1], min_effect=0.05)
    assert d.verdict == "same" and "noise" in d.why  # 10% apart, all overlap
    assert stats.compare_samples(a, [0.5 * x for x in a]).verdict == "improvement"
    assert stats.compare_samples([], [2.0]).verdict == "no-samples"
    one = stats.compare_samples([1.0], [2.0])
    assert one.verdict == "untestable" and one.ratio == 2.0 and one.ci_low is None


def test_untestable_sample_sizes_are_said_not_called_same():
    """first-contact-2 M2: 3 vs 3 samples can never give p < 0.05 (smallest exact two-sided p: 2/C(6,3) = 0.1)."""
    assert stats.min_p_value(3, 3) == pytest.approx(0.1) and stats.min_p_value(4, 4) == pytest.approx(2 / 70)
    assert stats.samples_needed(0.05) == 4 and stats.samples_needed(0.01) == 5
    a = [1.0, 1.01, 0.99]
    d = stats.compare_samples(a, [2 * x for x in a])  # a 2x slowdown
    assert d.verdict == "untestable" and d.p_value is None and d.ratio == pytest.approx(2.0)
    assert d.why == "3 vs 3 samples cannot reach p < 0.05 (the smallest possible p is 0.1; 4 a side can)"
    assert d.ci_low == pytest.approx(2.0 * 0.99 / 1.01, rel=1e-3) and d.ci_high == pytest.approx(2.0 * 1.01 / 0.99, rel=1e-3)
    lo, hi = stats.ratio_interval([1.0, 1.1, 0.9, 1.05, 0.95] * 4, [1.5, 1.6, 1.4, 1.55, 1.45] * 4)
    assert 1.3 < lo < 1.5 < hi < 1.7
    assert stats.ratio_interval([1.0, 1.1], [2.0, 2.1]) == stats.ratio_interval([1.0, 1.1], [2.0, 2.1])  # seeded
    with warnings.catch_warnings():  # times near the float range (a damaged record): no interval, no warning
        warnings.simplefilter("error")
        assert stats.ratio_interval([1e308, 1.7e308, 1e-300], [1.7e308, 1e308]) is None


class FakeGpu:
    """CuPy's events on a fake clock, with an L2 that remembers the last input a call read: a call
    costs `warm` when its input is in L2, `cold` otherwise; a memset (the flush) empties it."""

    def __init__(self):
        self.now, self.l2 = 0.0, None
        clock = self

        class Event:
            def record(self):
                self.t = clock.now

            def synchronize(self):
                pass

        dev = SimpleNamespace(synchronize=lambda: None, id=0)
        rt = SimpleNamespace(getDeviceProperties=lambda i: {"l2CacheSize": 50 << 20},
                             memsetAsync=lambda *a: setattr(clock, "l2", None))
        self.cp = SimpleNamespace(
            cuda=SimpleNamespace(Event=Event, Device=lambda *a: dev, get_elapsed_time=lambda a, b: b.t - a.t,
                                 runtime=rt, get_current_stream=lambda: SimpleNamespace(ptr=0)),
            empty=lambda n, dtype=None: SimpleNamespace(data=SimpleNamespace(ptr=1)), uint8="uint8")

    def op(self, input_set, cold, warm):
        def call():
            self.now += warm if self.l2 == input_set else cold
            self.l2 = input_set
        return call


def _interleaved(gpu, names, opts):
    from profconv.run import bench

    costs = {"tuned": (0.9, 0.85), "cudnn": (1.35, 1.05), "naive": (7.0, 7.0), "e2e": (3.0, 3.0),
             "fp16": (0.4, 0.3)}
    prepared = []
    for n in names:
        res = bench.BenchResult(n, "", "fp32", "fp32", "cudnn" if n != "cudnn" else None, 1e-5)
        prepared.append(bench._Prepared(res, [gpu.op(i if n != "e2e" else "host", *costs[n]) for i in range(3)]))
    timing = bench._time_interleaved(gpu.cp, "m/conv2", prepared, 3, opts, lambda m: None)
    return {p.result.variant: p.result for p in prepared}, timing


def test_cold_and_warm_figures_do_not_depend_on_the_company():
    from profconv.run import bench

    opts = bench.BenchOptions(repeat=5, warmup=1, target=None, l2="cold")
    full, timing = _interleaved(FakeGpu(), ["naive", "tuned", "fp16", "e2e", "cudnn"], opts)
    two, _ = _interleaved(FakeGpu(), ["tuned", "cudnn"], opts)
    assert (timing.rounds, timing.stopped) == (5, "repeats")
    for res in (full, two):
        assert res["cudnn"].op_time.median_s == pytest.approx(1.35e-3)  # cold: the headline asked for
        assert res["cudnn"].op_time_warm.median_s == pytest.approx(1.05e-3)
        assert res["tuned"].op_time_cold.median_s == pytest.approx(0.9e-3)
        assert len(res["tuned"].op_time.samples_s) == 15  # 5 rounds x 3 input sets
    ratio = lambda r: r["tuned"].op_time.median_s / r["cudnn"].op_time.median_s  # noqa: E731
    assert ratio(full) == pytest.approx(ratio(two))
    warm, _ = _interleaved(FakeGpu(), ["tuned", "cudnn"], bench.BenchOptions(repeat=5, warmup=1, target=None))
    assert warm["cudnn"].op_time is warm["cudnn"].op_time_warm  # warm: the default headline


def test_rounds_stop_when_stable_or_at_the_budget():
    from profconv.run import bench

    res, timing = _interleaved(FakeGpu(), ["tuned", "cudnn"], bench.BenchOptions(repeat=3, warmup=0, target=0.01))
    assert (timing.rounds, timing.stopped) == (3, "stable")  # constant costs: the interval is 0 at once
    assert res["tuned"].op_time.ci_rel == pytest.approx(0.0, abs=1e-12) and res["tuned"].op_time.stopped == "stable"
    assert res["tuned"].op_time.ci_low_s == pytest.approx(0.85e-3)  # warm, the default headline


def test_time_gpu_repeats_until_stable():
    from profconv.run import gpu as gpu_mod

    g = FakeGpu()
    costs = iter([5.0, 1.0, 9.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0] + [1.0] * 100)

    def fn():
        g.now += next(costs)

    t = gpu_mod.time_gpu(g.cp, fn, repeat=3, warmup=0, rule=gpu_mod.StopRule(0.01, budget_s=60))
    # two outliers: at n = 12 the interval x(3)..x(10) excludes both
    assert t.stopped == "stable" and len(t.samples) == 12 and t.median == pytest.approx(1e-3)
    d = t.as_dict()
    assert d["ci_rel"] == pytest.approx(0.0, abs=1e-12) and d["target"] == 0.01 and d["confidence"] == 0.95
    fixed = gpu_mod.time_gpu(g.cp, fn, repeat=4, warmup=1)
    assert len(fixed.samples) == 4 and fixed.stopped == "repeats" and fixed.as_dict()["ci_low_s"] is None


def _run(model="ece408", gpu="NVIDIA H200", shape="M=16 C=6 30x30 K=5", scale=1.0):
    from pathlib import Path

    from profconv.records import RunRecord, struct_from
    from profconv.report.inputs import RunInput

    samples = [0.001 * scale * (1 + 0.001 * k) for k in range(8)]
    doc = {"argv": [], "created": "", "model": {"name": model}, "environment": {"gpu": gpu},
           "results": [{"images": 100, "variant": "tuned", "status": "ok",
                        "conv": [{"layer": "conv2", "shape": shape, "status": "ok",
                                  "op_time": {"median_s": samples[4], "min_s": samples[0], "max_s": samples[-1],
                                              "samples_s": samples}}]}]}
    return RunInput(Path("run.json"), struct_from(RunRecord, doc))


def test_compare_decides_on_samples_and_warns_on_gpus_and_shapes():
    from profconv.report.compare import compare, document

    with pytest.raises(InputError, match="A is a run of ece408, B of cifar10"):
        compare(_run(), _run(model="cifar10"), 0.05)
    df = compare(_run(), _run(gpu="NVIDIA H100 80GB HBM3", scale=1.3), 0.05)
    assert df.attrs["warnings"] == ["different GPU: A NVIDIA H200 vs B NVIDIA H100 80GB HBM3"]
    assert df.verdict.tolist() == ["regression"] and df.p_value.iloc[0] < 0.001 and df.regression.tolist() == [True]
    same = compare(_run(), _run(scale=1.02), 0.05)  # significant, below the minimum effect
    assert same.verdict.tolist() == ["same"] and not same.regression.any()
    df = compare(_run(), _run(shape="M=16 C=6 32x32 K=5"), 0.05)
    assert df.verdict.tolist() == ["only in A", "only in B"] and not df.regression.any()
    doc = document(compare(_run(), _run(scale=1.3), 0.05), "a", "b", 0.05)
    assert "p < 0.05 (Mann-Whitney U" in doc.sections[0].blocks[0].text


def test_agreement_table_and_its_explanations():
    ops = [{"op": "m/naive/conv1", "calls": 8, "launches": 1, "busy_s": 7.324e-3, "span_s": 7.324e-3},
           {"op": "m/tuned/conv1", "calls": 8, "launches": 4, "busy_s": 0.150e-3, "span_s": 0.170e-3}]
    ncu = {"m/naive/conv1": agreement.NcuOp(7.30e-3, 1), "m/tuned/conv1": agreement.NcuOp(0.152e-3, 4)}
    df = agreement.agreement({"m/naive/conv1": 7.248e-3, "m/tuned/conv1": 0.200e-3}, ops, ncu,
                             {"clock_control": "none", "cache_control": "none"})
    naive, tuned = df.to_dict("records")
    assert naive["within"] and naive["cupti_vs_op"] == pytest.approx(7.324 / 7.248 - 1) and naive["why"] == ""
    assert not tuned["within"]
    assert "Op Time includes 30.0 µs outside the GPU work" in tuned["why"]
    assert "20.0 µs idle between the op's own launches" in tuned["why"]
    assert "ncu agrees with CUPTI (+1.3%)" in tuned["why"]
    base = agreement.agreement({"m/naive/conv1": 7.248e-3}, ops[:1], {"m/naive/conv1": agreement.NcuOp(9.496e-3, 1)},
                               {"clock_control": "base", "cache_control": "all"})
    assert "ncu locked the clocks to base" in base.why.iloc[0] and "flushed the caches" in base.why.iloc[0]
    md = agreement.markdown(df, {"clock_control": "none", "cache_control": "none"})
    assert "1 of 2 op(s) within" in md and "| naive/conv1 | 7.248 | 7.324 | 7.324 | 7.300 | +1.0% | +0.7% | within |" in md


def test_provenance_fields(tmp_path, monkeypatch, own_git):
    from profconv import provenance
    from profconv.run.gpu import kernel_source

    state = provenance.parse_smi("1980, 2619, 1980, 41, 121.35, 700.00, P0, 0x0000000000000000")
    assert state == {"source": "nvidia-smi", "sm_clock_mhz": 1980.0, "mem_clock_mhz": 2619.0,
                     "max_sm_clock_mhz": 1980.0, "temperature_c": 41.0, "power_w": 121.35, "power_limit_w": 700.0,
                     "pstate": "P0", "throttle_reasons": "0x0000000000000000"}
    assert provenance.parse_smi("[N/A], 1, 2, 3, 4, 5, P8, 0x1")["sm_clock_mhz"] is None  # never invented
    assert "expected 8" in provenance.parse_smi("1, 2")["why"]
    src = provenance.kernel_sources()
    assert src["naive.cu"] == provenance.sha256_text(kernel_source("naive.cu")) and len(src) >= 9
    # a git checkout: commit and dirty flag
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("a")
    env = ["-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(["git", *env, "-C", str(tmp_path), "add", "f"], check=True)
    subprocess.run(["git", *env, "-C", str(tmp_path), "commit", "-qm", "x"], check=True)
    clean = provenance.git_state(tmp_path)
    assert len(clean["commit"]) == 40 and clean["dirty"] is False
    (tmp_path / "f").write_text("b")
    assert provenance.git_state(tmp_path)["dirty"] is True
    rec = provenance.Recorder(None)
    rec.start()
    doc = rec.finish({"tool": "cupti"})
    assert len(doc["code"]["tree_sha256"]) == 64 and doc["code"]["tree_files"] > 50
    assert set(doc) == {"code", "kernels", "gpu", "profiler"} and doc["gpu"]["end"] == {"why": "no GPU"}
    assert doc["profiler"] == {"tool": "cupti"} and json.dumps(doc)


def test_agreement_without_ncu_settings():
    """A cupti-only run: its settings are not ncu's, the table and markdown say no ncu figures."""
    from pathlib import Path

    from profconv.commands.run import profiler_sections
    from profconv.profile.session import agreement_frame, agreement_records
    from profconv.records import ProfileInfo, load, struct_from
    from profconv.render import terminal

    prof = {"tool": "cupti", "settings": {"tool": "cupti"},
            "ops": [{"op": "m/naive/conv1", "calls": 8, "launches": 1, "busy_s": 7.324e-3, "span_s": 7.33e-3}]}
    df = agreement_frame(prof, {"m/naive/conv1": 7.248e-3})
    assert df.within.tolist() == [True] and df.ncu_s.isna().all()
    record = load("tests/data/runs/ece408-h200.json")
    record.profile = struct_from(ProfileInfo, {**prof, "agreement": agreement_records(df)})
    [section] = profiler_sections(record, Path("tests/data/runs/ece408-h200.json"))  # what `run --profile` prints
    con = terminal_console(80)
    terminal.section(con, section)
    text = con.file.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    row = next(line for line in text.splitlines() if line.startswith("naive/conv1"))
    assert row.split() == ["naive/conv1", "7.248", "ms", "7.324", "ms", "—", "+1.0%", "—", "within"]
    assert "CUPTI span not shown at 80 columns" in text  # the raw figures go first, the verdict stays
    words = " ".join(text.split())  # the paragraph wraps at 80 columns
    assert "no ncu figures in this run" in words and "--clock-control" not in words  # no ncu in this run
    assert "no ncu figures in this run" in agreement.markdown(df, prof["settings"])


def test_records_take_str_subclasses_such_as_torch_version():
    """torch.__version__ is a TorchVersion (a str subclass): every GPU run with PyTorch records it."""
    from profconv.records import Environment, struct_from
    from profconv.records.base import encode

    class TorchVersion(str):
        pass

    env = struct_from(Environment, {"torch_version": TorchVersion("2.11.0+cu130"), "gpu": "NVIDIA H200"})
    assert '"torch_version": "2.11.0+cu130"' in encode(env)


def test_gpu_state_asks_again_under_the_renamed_field(tmp_path, monkeypatch):
    """A driver that no longer knows clocks_throttle_reasons: asked again as clocks_event_reasons."""
    from profconv import provenance

    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\ncase \"$*\" in *throttle*) echo 'Field is not a valid field to query.' >&2; exit 2;; esac\n"
                   "echo '1755, 2619, 1980, 44, 310.5, 700.00, P0, 0x0000000000000000'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    state = provenance.gpu_state("00000000:19:00.0")
    assert state["sm_clock_mhz"] == 1755.0 and state["power_w"] == 310.5 and state["pstate"] == "P0"
    smi.write_text("#!/bin/sh\necho 'No devices were found' >&2; exit 6\n")
    assert provenance.gpu_state(0) == {"why": "nvidia-smi failed: No devices were found"}


H200 = "tests/data/numbers"


def test_h200_run_profiles_hold_the_timed_calls_only():
    """The H200 run (`profconv run --model ece408-high --profile cupti,ncu`, 10,000 images): every
    variant's CUPTI profile holds exactly its warm-up and timed calls; the agreement rows and why."""
    from pathlib import Path

    from profconv import records
    from profconv.parse.schema import conform

    rec = records.read(Path(f"{H200}/h200-run-prof/run.json"), records.RunRecord)
    rows = conform(pd.read_csv(f"{H200}/h200-run-prof/profile-rows.csv"))
    assert rec.profile.scope == "timed" and rec.profile.profiles == ["naive", "shared", "cudnn", "cudnn-nhwc",
                                                                     "cudnn-fp16-nhwc"]
    for n, v in enumerate(rec.profile.profiles, start=1):
        op = next(o for o in rec.profile.ops if o.op == f"ece408-high/{v}/conv1")
        res = next(r for r in rec.results if r.variant == v).conv[0]
        assert op.calls == rec.settings.warmup + len(res.op_time.samples_s)
        gpu = rows[(rows.profile == n) & (rows.section == "gpu")]
        assert int(gpu["calls"].sum()) == op.calls * op.launches  # no search, check, forward or reference kernel
    agree = {a.variant: a for a in rec.profile.agreement}
    assert agree["naive"].within and agree["naive"].cupti_vs_op == pytest.approx(7.329304e-3 / 7.415e-3 - 1, abs=1e-3)
    assert "Op Time includes 156.1 µs outside the GPU work" in agree["cudnn"].why
    assert rec.provenance.gpu.end.sm_clock_mhz == 1980.0


def test_h200_company_check_warm_agrees_cold_does_not():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "scripts/company_check.py", f"{H200}/h200-bench-10-variants.json",
                        f"{H200}/h200-bench-2-variants.json"], capture_output=True, text=True)
    assert r.returncode == 1  # that run's headline was cold
    assert "headline 5.176x / 5.862x (+13.3%); cold 5.176x / 5.862x (+13.3%); warm 6.345x / 6.348x (+0.0%)" in r.stdout


def _git(repo, *args):
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "-C", str(repo), *args], check=True,
                   capture_output=True)


def test_provenance_names_the_tree_that_ran(tmp_path, own_git):
    """The source tree's hash always (the shell's sha256sum listing); the commit only where it is that
    tree's: a copy inside another checkout (the GPU machine's .dev/NAME) records none and says why;
    untracked files count as dirty under profconv/ and kernels/ only; PROFCONV_GIT_COMMIT is the
    caller's word, recorded as such."""
    from profconv import provenance
    from profconv.records.provenance import summary_line

    repo = tmp_path / "repo"
    (repo / "profconv" / "__pycache__").mkdir(parents=True)
    (repo / "kernels").mkdir()
    (repo / "profconv" / "a.py").write_text("x = 1\n")
    (repo / "profconv" / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"\0")  # caches are not the source
    (repo / "kernels" / "k.cu").write_text("__global__ void k() {}\n")
    (repo / "README").write_text("r")
    listing = "".join(f"{hashlib.sha256((repo / f).read_bytes()).hexdigest()}  {f}\n"
                      for f in ("kernels/k.cu", "profconv/a.py"))
    expected = hashlib.sha256(listing.encode()).hexdigest()
    assert provenance.tree_hash(repo) == {"tree_sha256": expected, "tree_files": 2}
    shell = subprocess.run("find profconv kernels -type f ! -path '*/__pycache__/*' ! -name '*.py[co]' | LC_ALL=C sort"
                           " | xargs sha256sum | sha256sum", shell=True, cwd=repo, capture_output=True, text=True)
    assert shell.stdout.split()[0] == expected  # the documented shell line gives the same hash

    no_env: dict[str, str] = {}
    state = provenance.code_state(repo, no_env)
    assert state["commit"] is None and "not a git checkout" in state["why"] and state["tree_sha256"] == expected
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "x")
    clean = provenance.code_state(repo, no_env)
    assert len(clean["commit"]) == 40 and clean["dirty"] is False and clean["source"] == "git"
    (repo / "notes.txt").write_text("untracked, outside the source tree")
    assert provenance.git_state(repo, no_env)["dirty"] is False
    (repo / "profconv" / "new.py").write_text("y = 2\n")  # untracked code runs: dirty
    dirty = provenance.code_state(repo, no_env)
    assert dirty["dirty"] is True and dirty["changed"] == ["profconv/new.py"] and dirty["tree_files"] == 3
    (repo / "profconv" / "new.py").unlink()
    (repo / "kernels" / "k.cu").write_text("// edited\n")
    assert provenance.git_state(repo, no_env)["changed"] == ["kernels/k.cu"]

    # a copy of the tree inside another checkout: that checkout's HEAD is not its commit
    copy = repo / ".dev" / "numbers"
    (copy / "profconv").mkdir(parents=True)
    (copy / "profconv" / "a.py").write_text("x = 1\n")
    inside = provenance.code_state(copy, no_env)
    assert inside["commit"] is None and inside["dirty"] is None and "lies inside the git checkout" in inside["why"]
    assert "PROFCONV_GIT_COMMIT" in inside["why"] and inside["tree_files"] == 1
    given = provenance.code_state(copy, {"PROFCONV_GIT_COMMIT": clean["commit"].upper(), "PROFCONV_GIT_DIRTY": "0"})
    assert given["commit"] == clean["commit"] and given["dirty"] is False and given["source"] == "env"
    assert summary_line({"code": given}).startswith(f"commit {clean['commit'][:10]} given by the caller; source tree ")
    bad = provenance.git_state(copy, {"PROFCONV_GIT_COMMIT": "main; rm -rf /"})
    assert bad["commit"] is None and "is not a commit hash" in bad["why"]


def _bench_doc(variants, layers):
    """A minimal bench record: layers = {(model, layer): {variant: (warm_s, cold_s, reference)}}."""
    def op(t):
        return {"median_s": t}

    return {"environment": {"gpu": "NVIDIA H100 80GB HBM3"}, "settings": {"variants": variants, "l2": "warm"},
            "layers": [{"model": m, "layer": la, "results": [
                {"variant": v, "reference": ref, "op_time": op(w), "op_time_warm": op(w), "op_time_cold": op(c),
                 "params": {"kernels": "k1"} if v.startswith("cudnn") else {}}
                for v, (w, c, ref) in res.items()]} for (m, la), res in layers.items()]}


def test_company_check_over_several_pairs_and_layers(tmp_path):
    """scripts/company_check.py: each two-variant bench against the full one, on the layers asked,
    headline (warm) within ±3%, a markdown table; exit 1 when one ratio moves more."""
    import sys

    full = _bench_doc(["naive", "tuned", "tensorcore", "cudnn", "cudnn-nhwc", "cudnn-fp16-nhwc"], {
        ("ece408-high", "conv1"): {"tuned": (0.50e-3, 0.60e-3, "cudnn"), "tensorcore": (0.40e-3, 0.5e-3, "cudnn-fp16-nhwc"),
                                   "cudnn": (1.00e-3, 1.4e-3, None), "cudnn-fp16-nhwc": (1.2e-3, 1.3e-3, None)},
        ("ece408", "conv1"): {"tuned": (0.4e-3, 0.5e-3, "cudnn"), "cudnn": (2.0e-3, 2.2e-3, None)},
        ("ece408", "conv2"): {"tuned": (0.90e-3, 1.0e-3, "cudnn"), "tensorcore": (0.33e-3, 0.4e-3, "cudnn-fp16-nhwc"),
                              "cudnn": (1.05e-3, 1.35e-3, None), "cudnn-fp16-nhwc": (0.86e-3, 0.9e-3, None)}})
    two_a = _bench_doc(["tuned", "cudnn"], {
        ("ece408-high", "conv1"): {"tuned": (0.505e-3, 0.6e-3, "cudnn"), "cudnn": (1.0e-3, 1.2e-3, None)},
        ("ece408", "conv1"): {"tuned": (0.4e-3, 0.5e-3, "cudnn"), "cudnn": (3.0e-3, 2.2e-3, None)},  # not asked
        ("ece408", "conv2"): {"tuned": (0.90e-3, 1.0e-3, "cudnn"), "cudnn": (1.06e-3, 1.08e-3, None)}})
    two_b = _bench_doc(["tensorcore", "cudnn-fp16-nhwc"], {
        ("ece408-high", "conv1"): {"tensorcore": (0.40e-3, 0.5e-3, "cudnn-fp16-nhwc"),
                                   "cudnn-fp16-nhwc": (1.2e-3, 1.3e-3, None)},
        ("ece408", "conv2"): {"tensorcore": (0.33e-3, 0.4e-3, "cudnn-fp16-nhwc"),
                              "cudnn-fp16-nhwc": (0.86e-3, 0.9e-3, None)}})
    paths = []
    for name, doc in (("full", full), ("a", two_a), ("b", two_b)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(doc))
    md = tmp_path / "check.md"
    args = [sys.executable, "scripts/company_check.py", *map(str, paths), "--layers",
            "ece408-high/conv1,ece408/conv2", "--markdown", str(md)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ece408/conv1" not in r.stdout and "agree within the target" in r.stdout
    text = md.read_text()
    assert "bench of all 6 variants and in a bench of only the two (NVIDIA H100 80GB HBM3; headline figure: warm" in text
    assert "| ece408-high/conv1 | tuned | cudnn | 0.500× | 0.505× | +1.0% | 0.429× / 0.500× (+16.7%) | same | yes |" in text
    assert "| ece408/conv2 | tensorcore | cudnn-fp16-nhwc | 0.384× | 0.384× | +0.0% |" in text
    assert "4 of 4 ratios within ±3%." in text
    # every layer: ece408 conv1's cuDNN moved 50% with the company -> exit 1, marked
    r = subprocess.run(args[:5] + ["--markdown", str(md)], capture_output=True, text=True)
    assert r.returncode == 1 and "DISAGREE beyond the target" in r.stdout
    assert "| ece408/conv1 | tuned | cudnn | 0.200× | 0.133× | -33.3% |" in md.read_text()
    assert "**no**" in md.read_text()


def test_agreement_reasons_on_the_h100_run():
    """The H100 run of `profconv run --model ece408-high --profile cupti,ncu` (request 1, 10,000 images;
    reports/runs/numbers/h100-run-prof): with CUPTI's kernel-only figures each ncu gap gets its own
    reason — one call in a child process (naive), another configuration chosen by the child's sweep
    (tuned: 2 launches against 5), copies ncu does not time (streams), host time in Op Time (cuDNN)."""
    ops = [  # CUPTI per call (ops of the record; kernels and kernel time from its profile rows)
        {"op": "m/naive/conv1", "calls": 8, "launches": 1, "busy_s": 7.2685145e-3, "span_s": 7.2685145e-3,
         "kernels": 1, "kernel_busy_s": 7.2685145e-3},
        {"op": "m/tuned/conv1", "calls": 11, "launches": 10, "busy_s": 0.508103e-3, "span_s": 0.526824e-3,
         "kernels": 5, "kernel_busy_s": 5.51461e-3 / 11},
        {"op": "m/streams/conv1", "calls": 8, "launches": 96, "busy_s": 23.8438715e-3, "span_s": 22.123742e-3,
         "kernels": 32, "kernel_busy_s": 8.721227e-3 / 8},
        {"op": "m/cudnn/conv1", "calls": 8, "launches": 1, "busy_s": 1.143952e-3, "span_s": 1.143952e-3,
         "kernels": 1, "kernel_busy_s": 1.143952e-3}]
    ncu = {"m/naive/conv1": agreement.NcuOp(7.159392e-3, 1), "m/tuned/conv1": agreement.NcuOp(693.696e-6, 2),
           "m/streams/conv1": agreement.NcuOp(1.183808e-3, 32), "m/cudnn/conv1": agreement.NcuOp(1.142656e-3, 1)}
    op_times = {"m/naive/conv1": 7.328832e-3, "m/tuned/conv1": 0.550304e-3, "m/streams/conv1": 22.239312e-3,
                "m/cudnn/conv1": 1.189808e-3}
    settings = {"clock_control": "none", "cache_control": "none"}
    rows = {r["variant"]: r for r in agreement.agreement(op_times, ops, ncu, settings).to_dict("records")}
    naive = rows["naive"]
    assert naive["cupti_vs_op"] == pytest.approx(-0.0082, abs=1e-4) and naive["ncu_vs_op"] == pytest.approx(-0.0231, abs=1e-4)
    assert naive["why"] == ("ncu -1.5% from CUPTI's kernels: its one call ran in a separate child process (the card's "
                            "clock and L2 state of that moment)")
    assert ("the child run chose another configuration (its sweep or cuDNN's search): 2 kernel launch(es) per call "
            "under ncu against 5 here") in rows["tuned"]["why"]
    assert "Op Time includes 23.5 µs outside the GPU work (launch and host time, 10 launch(es) per call)" in rows["tuned"]["why"]
    streams = rows["streams"]
    assert streams["cupti_kernel_s"] == pytest.approx(1.0901534e-3) and streams["cupti_kernels"] == 32
    assert ("ncu times kernels only: the op's copies and memsets (22753.7 µs per call) are not in its figure; against "
            "CUPTI's kernels ncu is +8.6%") in streams["why"]
    assert "ncu agrees with CUPTI (-0.1%): the gap to Op Time is host time, not kernel time" in rows["cudnn"]["why"]
    assert not any(r["within"] for r in rows.values())  # every miss is explained, none is left bare
    assert all(r["why"] for r in rows.values())


def test_h100_company_check_full_and_two_variant_benches_agree():
    """The H100 evidence (request 2 of this session, reports/runs/numbers/h100/company): every GPU
    variant (18) against only the two, on ece408-high conv1 and Spring 2018 conv2: the warm headline
    ratios agree within ±3% (within 1% here), the cold ones do not (PyTorch's host time), and cuDNN
    ran the same kernels in both; the bench record shows the best cuDNN per precision with its layout."""
    import sys

    from profconv import records
    from profconv.report.bench import to_markdown

    d = "tests/data/numbers/h100-company"
    r = subprocess.run([sys.executable, "scripts/company_check.py", f"{d}/bench-full.json", f"{d}/bench-tuned-cudnn.json",
                        f"{d}/bench-tensorcore-cudnn-fp16-nhwc.json"], capture_output=True, text=True)
    assert r.returncode == 0 and "agree within the target" in r.stdout
    assert ("ece408/conv2 tuned vs cudnn, full / two: headline 0.693x / 0.697x (+0.5%); cold 0.613x / 0.683x (+11.5%)"
            in r.stdout)
    assert "ran other kernels" not in r.stdout
    full = records.read(Path(f"{d}/bench-full.json"), records.BenchRecord)
    assert len(full.settings.variants) == 18 and full.settings.layers == ["ece408-high/conv1", "ece408/conv2"]
    assert full.provenance.code.source == "env" and full.provenance.code.tree_files == 128
    md = to_markdown(full)
    assert "| ece408 | conv2 | fp16 | cudnn-fp16-nhwc | NHWC | 825 µs | 0.1% | NCHW 1.567 ms |" in md
    assert "| ece408 | conv2 | fp32 | cudnn | NCHW | 1.195 ms | 0.1% | NHWC 3.075 ms |" in md
