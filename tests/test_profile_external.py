"""External profilers without a GPU: command lines, child-process failures, stored ncu output."""

import os
import sys
from pathlib import Path

import pytest

from profconv.errors import ProfilerFailed, ProfilerUnavailable
from profconv.profile import external
from profconv.profile.session import check_available
from tests.conftest import terminal_console

CHILD = external.ChildRun("ece408-high", 1000, ["naive", "tuned"], Path("/tmp/r/ncu-child"))


def test_child_argv():
    assert CHILD.argv()[1:] == ["-m", "profconv", "run", "--model", "ece408-high", "--images", "1000", "--variant",
                                "naive,tuned", "--repeat", "1", "--warmup", "0", "--ci-target", "0",
                                "--out", "/tmp/r/ncu-child"]


def test_ncu_argv():
    child = external.ChildRun("ece408", 100, ["naive", "tuned"], Path("/tmp/c"), layers=("conv1", "conv2"))
    argv = external.ncu_argv("/opt/ncu", ["python", "x.py"], child.ranges())
    assert argv[:4] == ["/opt/ncu", "--csv", "--page", "raw"]
    assert argv[argv.index("--metrics") + 1].split(",")[:3] == [
        "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]
    includes = [argv[i + 1] for i, a in enumerate(argv) if a == "--nvtx-include"]
    assert includes == ["profconv@ece408/naive/conv1/", "profconv@ece408/naive/conv2/",
                        "profconv@ece408/tuned/conv1/", "profconv@ece408/tuned/conv2/"]
    # the checks, sweeps and cuDNN's algorithm search nested in each timed op's range are not replayed
    excludes = [argv[i + 1] for i, a in enumerate(argv) if a == "--nvtx-exclude"]
    assert excludes == ["profconv@ece408/naive/conv1/check/", "profconv@ece408/naive/conv2/check/",
                        "profconv@ece408/tuned/conv1/check/", "profconv@ece408/tuned/conv2/check/"]
    assert argv.index("--nvtx") < argv.index("--nvtx-include") < argv.index("--nvtx-exclude")
    assert "--nvtx" in argv and argv[-2:] == ["python", "x.py"]
    everything = external.ncu_argv("/opt/ncu", ["python", "x.py"], child.ranges(), everything=True)
    assert "--nvtx-exclude" not in everything and everything.count("--nvtx-include") == 4
    # by default ncu runs at the card's clocks without cache flushes, as Op Time does
    assert argv[4:8] == ["--clock-control", "none", "--cache-control", "none"]
    base = external.ncu_argv("/opt/ncu", [], child.ranges(), settings=external.NcuSettings("base", "all"))
    assert base[4:8] == ["--clock-control", "base", "--cache-control", "all"]


NCU_CSV = (
    '==PROF== Connected to process 1\n'
    '"ID","Kernel Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value","gpu__time_duration.sum"\n'
    '"","","","nsecond"\n'
    '"0","conv_tuned"," ""0:profconv:m:none:none"" ""1:profconv:tuned:none:none"" ""2:profconv:conv1:none:none"" ""3:profconv:check:none:none"" ""4:profconv:tune:none:none"" ","42,000"\n'
    '"1","conv_tuned"," ""0:profconv:m:none:none"" ""1:profconv:tuned:none:none"" ""2:profconv:conv1:none:none"" ""3:profconv:check:none:none"" ","20,000"\n'
    '"2","conv_tuned"," ""0:profconv:m:none:none"" ""1:profconv:tuned:none:none"" ""2:profconv:conv1:none:none"" ","21,500"\n'
    '"3","fft2d_r2c"," ""0:profconv:m:none:none"" ""1:profconv:cudnn:none:none"" ""2:profconv:conv1:none:none"" ""3:profconv:check:none:none"" ""4:profconv:tune:none:none"" ","10,000,000"\n'
    '"4","sgemm"," ""0:profconv:m:none:none"" ""1:profconv:cudnn:none:none"" ""2:profconv:conv1:none:none"" ","30,000"\n'
    '==PROF== Disconnected\n'
)


def test_ncu_rows_of_the_timed_op_only():
    from profconv.analysis.agreement import ncu_per_op
    from profconv.profile.activity import role_of

    kept, dropped = external.split_ncu_csv(NCU_CSV, lambda r: role_of(r) == "timed")
    assert dropped == 3 and "fft2d_r2c" not in kept and '"2","conv_tuned"' in kept and kept.endswith("Disconnected\n")
    launches = external.ncu_launches(NCU_CSV)
    assert [(k.range, role_of(k.range)) for k in launches][:3] == [
        ("m/tuned/conv1/check/tune", "tune"), ("m/tuned/conv1/check", "check"), ("m/tuned/conv1", "timed")]
    per_op = ncu_per_op([{"range": k.range, "metrics": k.metrics, "units": k.units} for k in launches], 1,
                        lambda r: role_of(r) == "timed")
    assert per_op["m/tuned/conv1"].seconds == pytest.approx(21.5e-6) and per_op["m/cudnn/conv1"].launches == 1
    import profconv

    ps = profconv.parse_text(kept, format="ncu")
    assert set(ps.frame["name"]) >= {"conv_tuned", "sgemm"} and "fft2d_r2c" not in set(ps.frame["name"])


def test_nsys_and_nvprof_argv():
    assert external.nsys_profile_argv("nsys", ["a"], Path("/r/nsys-report")) == [
        "nsys", "profile", "--trace=cuda,nvtx", "--force-overwrite=true", "--output", "/r/nsys-report", "a"]
    assert external.nsys_stats_argv("nsys", Path("/r/x.nsys-rep"))[1:5] == ["stats", "--format", "csv", "--report"]
    assert external.nvprof_argv("nvprof", ["a"], Path("/r/n.log")) == [
        "nvprof", "--log-file", "/r/n.log", "--profile-child-processes", "a"]


def test_nvprof_refuses_ampere_and_newer():
    assert external.nvprof_supported("7.0") and not external.nvprof_supported("9.0")
    with pytest.raises(ProfilerUnavailable, match=r"nvprof does not support this GPU \(compute capability 9.0"):
        check_available("nvprof", "9.0")


def test_missing_tool(tmp_path):
    with pytest.raises(ProfilerUnavailable, match="no-such-profiler is not installed.*--profile cupti"):
        external.run_tool(["no-such-profiler", "--version"], tmp_path / "log", 5)


def test_a_tool_this_user_may_not_run_is_one_line(tmp_path, monkeypatch):
    """A file of that name without execute permission on PATH (or, for a user other than root, a PATH
    directory the user may not search: the suite run as user nobody met one) is no traceback."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "no-such-profiler").write_text("#!/bin/sh\n")  # mode 0644: no one may run it
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(ProfilerUnavailable, match="no-such-profiler is not installed or not on PATH .*--profile cupti"):
        external.run_tool(["no-such-profiler", "--version"], tmp_path / "log", 5)


def test_tool_failure_names_the_log(tmp_path):
    script = "import sys; print('==ERROR== LaunchFailed'); sys.exit(1)"
    with pytest.raises(ProfilerFailed, match=r"failed: ==ERROR== LaunchFailed \(log: .*tool\.log\)"):
        external.run_tool([sys.executable, "-c", script], tmp_path / "tool.log", 10)
    assert "LaunchFailed" in (tmp_path / "tool.log").read_text()


def test_tool_timeout(tmp_path):
    with pytest.raises(ProfilerFailed, match=r"timed out after 1 s"):
        external.run_tool([sys.executable, "-c", "import time; time.sleep(5)"], tmp_path / "t.log", 1)


def test_tool_timeout_ends_the_profiled_child_too(tmp_path):
    """A profiler that hangs: at the timeout its child (the profiled profconv, holding the GPU) goes
    with it, and what the profiler printed before is in the log."""
    import os
    import time

    pidfile = tmp_path / "child.pid"
    script = (f"import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
              f"open({str(pidfile)!r}, 'w').write(str(c.pid)); print('==PROF== Connected', flush=True); time.sleep(60)")
    t0 = time.monotonic()
    with pytest.raises(ProfilerFailed, match=r"timed out after 2 s"):
        external.run_tool([sys.executable, "-c", script], tmp_path / "t.log", 2)
    assert time.monotonic() - t0 < 20
    assert "==PROF== Connected" in (tmp_path / "t.log").read_text()
    pid = int(pidfile.read_text())
    for _ in range(50):  # the grandchild is killed with the group (reaped by init shortly after)
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except (ProcessLookupError, FileNotFoundError):
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail("the profiled child outlived the profiler's timeout")


NCU_RAW = (
    '==PROF== Connected to process 9 (/usr/bin/python3)\n'
    '"ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value","Kernel Name",'
    '"Context","Stream","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum",'
    '"launch__registers_per_thread"\n'
    '"","","","","","","","","","","Mbyte","Gbyte","usecond","register/thread"\n'
    '"0","9","python3","127.0.0.1"," ""0:profconv:ece408-high:none:none"" ""1:profconv:naive:none:none"" '
    '""2:profconv:conv1:none:none"" ","conv_forward","1","7","0",'
    '"9.0","31.40","1.15","7,245.10","32"\n'
    '"1","9","python3","127.0.0.1"," ""0:profconv:ece408-high:none:none"" ""1:profconv:tuned:none:none"" '
    '""2:profconv:conv1:none:none"" ","conv_tuned","1","7","0",'
    '"9.0","31.38","1.15","574.20","40"\n'
)


def test_ncu_launches_attributed_to_ranges():
    launches = external.ncu_launches(NCU_RAW)
    assert [(k.range, k.kernel) for k in launches] == [("ece408-high/naive/conv1", "conv_forward"),
                                                       ("ece408-high/tuned/conv1", "conv_tuned")]
    assert launches[1].metrics["gpu__time_duration.sum"] == 574.2
    assert launches[0].units["dram__bytes_write.sum"] == "Gbyte"


def test_cli_profile_errors(cli):
    r = cli("run", "--profile", "vtune", "--images", "5")
    assert r.returncode == 2 and "--profile takes one of cupti, ncu, nsys, nvprof (or cupti,ncu), not 'vtune'" in r.stderr
    r = cli("run", "--profile", "cupti,ncu,nsys", "--images", "5")
    assert r.returncode == 2 and "one external profiler per run, not ncu, nsys" in r.stderr
    r = cli("run", "--profile", "ncu", "--ncu-clock-control", "boost", "--images", "5")
    assert r.returncode == 2 and "--ncu-clock-control takes none or base" in r.stderr


@pytest.mark.nogpu
def test_cli_profile_without_gpu_is_one_line_exit_3(cli):
    r = cli("run", "--profile", "cupti", "--images", "5")
    assert r.returncode == 3 and "--profile cupti needs a CUDA GPU and CuPy" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_ncu_table_renders_the_conv_ops():
    """`run --profile ncu` prints the report's own Nsight Compute section through the terminal renderer."""


    from profconv.commands.run import profiler_sections
    from profconv.records import ProfileInfo, load, struct_from
    from profconv.render import terminal

    summary = {"tool": "ncu", "launches": [{"range": k.range, "kernel": k.kernel, "metrics": k.metrics, "units": k.units}
                                           for k in external.ncu_launches(NCU_RAW)]}
    record = load("tests/data/runs/ece408-h200.json")
    record.profile = struct_from(ProfileInfo, summary)
    sections = profiler_sections(record, Path("tests/data/runs/ece408-h200.json"))
    assert [s.title for s in sections] == ["Nsight Compute metrics"]
    text = {}
    for width in (200, 80):
        con = terminal_console(width)
        terminal.section(con, sections[0])
        text[width] = con.file.getvalue()
        assert max(len(line) for line in text[width].splitlines()) <= width
        assert "ece408-high/tuned/conv1" in text[width] and "conv_tuned" in text[width]
        assert "7,245" in text[width] and "574.2" in text[width]  # metrics right-aligned, never cut
    assert "DRAM write (Gbyte)   regs (register/thread)" in text[200]
    assert "regs (register/thread), DRAM write (Gbyte) not shown at 80 columns" in text[80]  # from the right, named


def test_ncu_child_run_end_to_end_with_a_stand_in_ncu(tmp_path):
    """The ncu path of `run --profile ncu` without a GPU: a stand-in `ncu` records the argv it got and
    prints a CSV as ncu does with the NVTX filter applied (the timed launches only); the session keeps
    the raw output, parses the timed op's rows and puts ncu's per-call figure in the agreement."""
    from profconv.profile import session

    fake = tmp_path / "ncu"
    fake.write_text("#!" + sys.executable + "\nimport json, sys\n"
                    f"open({str(tmp_path / 'argv.json')!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
                    f"sys.stdout.write({NCU_RAW!r})\n")
    fake.chmod(0o755)
    child = external.ChildRun("ece408-high", 10000, ["naive", "tuned"], tmp_path / "ncu-child")
    ps, summary = session.external_results("ncu", str(fake), child, tmp_path, 30)
    import json

    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[argv.index("--nvtx-exclude") + 1] == "profconv@ece408-high/naive/conv1/check/"
    assert argv[-len(child.argv()):] == child.argv()  # the child profconv run, after ncu's options
    assert summary["scope"] == "timed" and summary["set_aside"] == 0 and summary["calls_per_op"] == 1
    assert summary["settings"]["clock_control"] == "none" and "--nvtx-exclude" in summary["settings"]["argv"]
    assert (tmp_path / "ncu-raw.csv").read_text() == NCU_RAW
    assert {r["role"] for r in summary["launches"]} == {"timed"}
    assert set(ps.frame["name"]) >= {"conv_forward", "conv_tuned"}
    df = session.agreement_frame(summary, {"ece408-high/naive/conv1": 7.25e-3, "ece408-high/tuned/conv1": 0.60e-3})
    rows = {r["variant"]: r for r in df.to_dict("records")}
    assert rows["naive"]["ncu_s"] == pytest.approx(7.2451e-3) and rows["naive"]["within"]
    assert rows["tuned"]["ncu_vs_op"] == pytest.approx(574.2e-6 / 0.60e-3 - 1) and not rows["tuned"]["within"]
    assert "ncu -4.3% against Op Time in a separate child run" in rows["tuned"]["why"]
