"""The three course reports (profiler output kept, prose dropped): damaged text recovered exactly."""

import pytest

import profconv
from profconv.analysis.ranking import rank_profile

SEEDS = "tests/data/seeds/"


def _top(ps, profile, section):
    return rank_profile(ps.frame, profile, [section])[0]


def test_seed_002_milestone1_tables_without_markers():
    ps = profconv.parse(SEEDS + "002_b0bcac5cefbf4480.log")
    gpu = _top(ps, 1, "gpu")
    assert gpu.rows["name"].tolist()[:3] == [
        "void fermiPlusCgemmLDS128_batched<...>",
        "void cudnn::detail::implicit_convolve_sgemm<...>",
        "void fft2d_c2r_32x32<...>",
    ]
    assert gpu.rows["total_ns"].iloc[0] == pytest.approx(118.46e6)  # header said Time(ms)
    assert gpu.top_count == 6 and len(gpu.rows) == 9  # 34.00+26.94+12.65+8.19+6.65 = 88.4 < 90
    api = _top(ps, 1, "api")
    # the student's Time(ms) column mixes seconds and ms: ranked by the printed Time(%), flagged
    # next to the table (first-contact §4)
    assert api.basis == "time_pct"
    assert api.rows["name"].tolist()[:3] == ["cudaStreamCreateWithFlags", "cudaFree", "cudaMemGetInfo"]
    assert api.top_count == 3 and api.rows["share"].iloc[0] == pytest.approx(43.48 / 99.88)
    assert ps.table_notes[(1, "api")] == [
        "lines 27-33: the Time column contradicts the printed Time(%) (mislabelled units?): "
        "ranked by the printed Time(%)"]
    frame_api = ps.frame[(ps.frame.profile == 1) & (ps.frame.section == "api")]
    assert frame_api["in_top"].sum() == 3 and set(frame_api["share_basis"]) == {"time_pct"}


def test_seed_002_milestone3_context_and_split_api_table():
    ps = profconv.parse(SEEDS + "002_b0bcac5cefbf4480.log")
    info = ps.profiles[1]
    assert info.pid == 314 and info.command == "python m3.1.py"
    assert info.op_times_s == [0.355486, 0.652564]
    assert info.correctness == 0.8451 and info.model == "ece408"
    api = ps.frame[(ps.frame.profile == 2) & (ps.frame.section == "api")]
    # '21.098u\t24.749 us' columns split by the PDF still parse
    row = api[api.name == "cudaStreamCreateWithPriority"].iloc[0]
    assert row["min_ns"] == pytest.approx(21098) and row["max_ns"] == pytest.approx(24749)
    assert _top(ps, 2, "gpu").rows["name"].iloc[0] == "mxnet::op::forward_kernel"
    # 100-image run: API table cut by a code fence, wrapped names re-joined
    api3 = ps.frame[(ps.frame.profile == 3) & (ps.frame.section == "api")]
    assert "cudaDeviceGetStreamPriorityRange" in set(api3.name)
    assert len(api3) == 31  # 17 rows before the fence, 14 after
    assert ps.profiles[2].op_times_s == [0.003272, 0.006654]


def test_seed_001_wrapped_kernel_names_rejoined():
    ps = profconv.parse(SEEDS + "001_f908eb42489cd140.log")
    gpu = _top(ps, 1, "gpu").rows
    first = gpu["name"].iloc[0]
    assert first.startswith("void cudnn::detail::implicit_convolve_sgemm<float, int=1024")
    assert first.endswith("float const *, float const *, int, int)")
    assert gpu["short_name"].iloc[0] == "cudnn::detail::implicit_convolve_sgemm<…>"
    assert [p.model for p in ps.profiles] == [None, "ece408-high", "ece408-low", "ece408-high"]
    assert ps.profiles[1].op_times_s == [2.867524] and ps.profiles[2].correctness == 0.629
    # the markdown-table API section of profile 2 (pipes, separator row) and its tail after a fence
    api = ps.frame[(ps.frame.profile == 2) & (ps.frame.section == "api")]
    assert len(api) == 31 and api.name.iloc[0] == "cudaDeviceSynchronize"
    assert api.calls.iloc[0] == 1 and api.total_ns.iloc[0] == pytest.approx(2.86748e9)


def test_seed_004_openacc_and_nvprof_in_one_report():
    ps = profconv.parse(SEEDS + "004_2bdc63d5feab4c65.log")
    tools = [p.tool for p in ps.profiles]
    assert tools.count("nvhpc-acc") == 2 and tools.count("nvprof") == 4
    nv = next(p for p in ps.profiles if p.tool == "nvprof")
    assert nv.pid == 3172958 and nv.correctness == pytest.approx(0.7825)
    rows = ps.frame[ps.frame.profile == nv.profile]
    assert set(rows.section) == {"gpu", "api", "openacc", "unified-memory"}
    um = rows[rows.section == "unified-memory"].set_index("name")
    assert um.loc["Host To Device", "calls"] == 19939
    assert um.loc["Host To Device", "bytes"] == pytest.approx(267.7031 * 1024**2)
    assert um.loc["Total CPU Page faults", "calls"] == 18339
    acc_rows = _top(ps, ps.profiles[0].profile, "gpu").rows
    assert acc_rows["total_ns"].iloc[0] == pytest.approx(7_078_597_000)


def test_nvprof_api_trace_aggregated_and_kept():
    text = (
        "==5== Profiling result:\n"
        "   Start  Duration  Name\n"
        "174.30ms  12.100us  cudaMalloc\n"
        "174.40ms  3.2000us  cudaLaunchKernel\n"
        "174.50ms  2.8000us  cudaLaunchKernel\n"
    )
    ps = profconv.parse_text(text)
    api = ps.frame[ps.frame.section == "api"].set_index("name")
    assert api.loc["cudaLaunchKernel", "calls"] == 2
    assert api.loc["cudaLaunchKernel", "total_ns"] == pytest.approx(6000.0)
    assert api.loc["cudaLaunchKernel", "max_ns"] == pytest.approx(3200.0)
    trace = ps.frame[ps.frame.section == "api-trace"]
    assert trace["start_ns"].tolist() == pytest.approx([174.30e6, 174.40e6, 174.50e6])


def test_ncu_raw_page_csv():
    text = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Device","CC",'
        '"dram__bytes_read.sum","gpu__time_duration.sum","launch__registers_per_thread"\n'
        '"","","","","","","","","","Mbyte","usecond","register/thread"\n'
        '"0","9","app","h","conv_tuned","1","7","0","9.0","1,180.50","574.30","40"\n'
        '"1","9","app","h","conv_tuned","1","7","0","9.0","1,180.40","570.10","40"\n'
    )
    ps = profconv.parse_text(text)
    gpu = ps.frame[ps.frame.section == "gpu"].iloc[0]
    assert gpu["name"] == "conv_tuned" and gpu["calls"] == 2
    assert gpu["total_ns"] == pytest.approx(1144400.0)
    m = ps.frame[(ps.frame.section == "ncu-metric") & (ps.frame.metric == "dram__bytes_read.sum")]
    assert m["value"].tolist() == [1180.5, 1180.4] and set(m["unit"]) == {"Mbyte"}
