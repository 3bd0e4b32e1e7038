"""Property tests: random tables rendered in each dialect parse back to the same rows;
random or truncated bytes never raise anything but the clean input error."""

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import profconv
from profconv.errors import InputError

NAME = st.text(alphabet=string.ascii_letters + "_:<>, ", min_size=1, max_size=40).map(
    lambda s: "k_" + " ".join(s.split())
).filter(lambda s: s.count("<") == s.count(">"))
ROW = st.tuples(NAME, st.integers(1, 10**6), st.integers(1, 10**9))  # name, calls, total ns


def _unique(rows):
    seen, out = set(), []
    for r in rows:
        if r[0] not in seen:
            seen.add(r[0])
            out.append(r)
    return out


def _nvprof_time(ns: int) -> str:
    return f"{ns}ns"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ROW, min_size=1, max_size=12).map(_unique))
def test_nvprof_summary_round_trip(rows):
    total = sum(r[2] for r in rows)
    lines = ["==42== Profiling result:", "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"]
    for i, (name, calls, ns) in enumerate(rows):
        label = " GPU activities:" if i == 0 else "                "
        lines.append(f"{label}  {100 * ns / total:.2f}%  {_nvprof_time(ns)}  {calls}  {_nvprof_time(ns // calls)}"
                     f"  {_nvprof_time(1)}  {_nvprof_time(ns)}  {name}")
    ps = profconv.parse_text("\n".join(lines) + "\n")
    got = ps.frame
    assert got["name"].tolist() == [r[0] for r in rows]
    assert got["calls"].tolist() == [r[1] for r in rows]
    assert got["total_ns"].tolist() == [float(r[2]) for r in rows]
    assert set(got["section"]) == {"gpu"}


@settings(max_examples=60, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=12).map(_unique))
def test_nsys_csv_round_trip(rows):
    lines = ["Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"]
    total = sum(r[2] for r in rows)
    for name, calls, ns in rows:
        quoted = f'"{name}"' if "," in name else name
        lines.append(f"{100 * ns / total:.1f},{ns},{calls},{ns / calls:.1f},{ns / calls:.1f},1,{ns},0.0,{quoted}")
    ps = profconv.parse_text("\n".join(lines) + "\n")
    assert ps.frame["name"].tolist() == [r[0] for r in rows]
    assert ps.frame["calls"].tolist() == [r[1] for r in rows]
    assert ps.frame["total_ns"].tolist() == [float(r[2]) for r in rows]


@settings(max_examples=40, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=10).map(_unique))
def test_nsys_console_round_trip(rows):
    names = [r[0] for r in rows]
    width = max(len(n) for n in names)
    lines = [" Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Name".ljust(50),
             " --------  ---------------  ---------  --------  " + "-" * width]
    total = sum(r[2] for r in rows)
    for name, calls, ns in rows:
        lines.append(f" {100 * ns / total:8.1f}  {ns:>15,}  {calls:>9,}  {ns / calls:8.1f}  {name}")
    ps = profconv.parse_text("[5/8] Executing 'cuda_api_sum' stats report\n\n" + "\n".join(lines) + "\n")
    assert ps.frame["name"].tolist() == names
    assert ps.frame["total_ns"].tolist() == [float(r[2]) for r in rows]
    assert set(ps.frame["section"]) == {"api"}


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_only_clean_errors(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("b") / "x.log"
    path.write_bytes(data)
    try:
        profconv.parse(str(path))
    except InputError:
        pass


@pytest.mark.parametrize("path", ["tests/data/seeds/001_f908eb42489cd140.log",
                                  "tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log",
                                  "tests/data/ncu-csv/yktian-paddle-demo-nvtx-metrics.csv.log",
                                  "tests/data/acc-time/oliatsm-cnn-cifar10-nvhpc-acc-time.log"])
@settings(max_examples=30, deadline=None)
@given(cut=st.floats(0.0, 1.0))
def test_truncated_logs_only_clean_errors(path, cut):
    text = open(path, encoding="utf-8").read()
    try:
        profconv.parse_text(text[: int(len(text) * cut)])
    except InputError:
        pass


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(NAME, st.integers(1, 10**7)), min_size=1, max_size=8).map(_unique))
def test_ncu_csv_details_round_trip(rows):
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name",'
            '"Metric Name","Metric Unit","Metric Value"')
    lines = ["==PROF== Connected to process 7 (/bin/app)", head]
    for i, (name, ns) in enumerate(rows):
        lines.append(f'"{i}","7","app","127.0.0.1","{name}","1","7","GPU Speed Of Light Throughput",'
                     f'"Duration","nsecond","{ns:,}"')
    ps = profconv.parse_text("\n".join(lines) + "\n")
    gpu = ps.frame[ps.frame.section == "gpu"].sort_values("line_start")
    assert gpu["name"].tolist() == [r[0] for r in rows]
    assert gpu["total_ns"].tolist() == [float(r[1]) for r in rows]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9999), st.integers(1, 10**6), st.integers(1, 10**9)), min_size=1,
                max_size=8, unique_by=lambda r: r[0]))
def test_acc_round_trip(rows):
    lines = ["Accelerator Kernel Timing data", "/src/layers.c", "  conv_forward  NVIDIA  devicenum=0", "    time(us): 0"]
    for line_no, calls, total_us in rows:
        lines += [f"    {line_no}: compute region reached {calls:,} times",
                  f"        {line_no}: kernel launched {calls:,} times",
                  "            grid: [560]  block: [128]",
                  f"            elapsed time(us): total={total_us:,} max={total_us:,} min=0 avg={total_us // calls:,}"]
    ps = profconv.parse_text("\n".join(lines) + "\n")
    gpu = ps.frame[ps.frame.section == "gpu"].sort_values("line_start")
    assert gpu["name"].tolist() == [f"conv_forward@layers.c:{r[0]} kernel" for r in rows]
    assert gpu["calls"].tolist() == [r[1] for r in rows]
    assert gpu["total_ns"].tolist() == [r[2] * 1e3 for r in rows]
