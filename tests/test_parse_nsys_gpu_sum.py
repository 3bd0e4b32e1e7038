"""nsys's combined GPU report (cuda_gpu_sum: kernels and memory operations in one table) printed
beside cuda_gpu_kern_sum / cuda_gpu_mem_time_sum of the same run repeats their rows; ranked
together every kernel counted twice (each at half its share). Counted once, with a note."""

from __future__ import annotations

import profconv
from tests.parse_invariants import check_all

_KERN = """[6/9] Executing 'cuda_gpu_kern_sum' stats report

 Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)        Name
 --------  ---------------  ---------  --------  --------  --------  --------  -----------  -----------------
    100.0        1,830,493      1,010   1,812.4   1,824.0     1,792     2,752         35.8  vectorAdd(int)
"""
_MEM = """[7/9] Executing 'cuda_gpu_mem_time_sum' stats report

 Time (%)  Total Time (ns)  Count  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)      Operation
 --------  ---------------  -----  --------  --------  --------  --------  -----------  ------------------
     53.1            2,465      2   1,232.5   1,232.5     1,025     1,440        293.4  [CUDA memcpy HtoD]
     46.9            2,176      1   2,176.0   2,176.0     2,176     2,176          0.0  [CUDA memcpy DtoH]
"""
_ALL = """[9/9] Executing 'cuda_gpu_sum' stats report

 Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)   Category       Operation
 --------  ---------------  ---------  --------  --------  --------  --------  -----------  -----------  ------------------
     99.7        1,830,493      1,010   1,812.4   1,824.0     1,792     2,752         35.8  CUDA_KERNEL  vectorAdd(int)
      0.1            2,465          2   1,232.5   1,232.5     1,025     1,440        293.4  MEMORY_OPER  [CUDA memcpy HtoD]
      0.1            2,176          1   2,176.0   2,176.0     2,176     2,176          0.0  MEMORY_OPER  [CUDA memcpy DtoH]
      0.1            1,000          1   1,000.0   1,000.0     1,000     1,000          0.0  MEMORY_OPER  [CUDA memset]
"""


def _gpu(text: str):
    ps = profconv.parse_text(text, label="gpu-sum.log")
    check_all(ps, text)
    f = ps.frame
    return ps, f[f["section"] == "gpu"]


def test_the_combined_report_beside_kernels_and_memcopies_counts_each_once():
    ps, gpu = _gpu(_KERN + "\n" + _MEM + "\n" + _ALL)
    # the memset is only in the combined report: it stays
    assert sorted(zip(gpu["name"], gpu["total_ns"])) == [
        ("[CUDA memcpy DtoH]", 2176.0), ("[CUDA memcpy HtoD]", 2465.0), ("[CUDA memset]", 1000.0),
        ("vectorAdd(int)", 1830493.0)]
    assert round(gpu["share"].sum(), 9) == 1.0
    assert round(float(gpu.loc[gpu["name"] == "vectorAdd(int)", "share"].iloc[0]), 4) == round(1830493 / 1836134, 4)
    assert ps.notes[0] == (
        "profile 1, gpu table, lines 18-21: 3 row(s) of nsys report cuda_gpu_sum (all GPU work in one table) "
        "repeat cuda_gpu_kern_sum and cuda_gpu_mem_time_sum of the same run: counted once, from the latter")
    assert not any("adds up to" in n for n in ps.notes)  # its printed Time(%) still hold the rows left out


def test_the_combined_report_first_and_beside_kernels_only():
    ps, gpu = _gpu(_ALL + "\n" + _KERN)
    # no cuda_gpu_mem_time_sum: the memcopies are read from the combined report, the kernel from its own
    assert sorted(zip(gpu["name"], gpu["calls"])) == [
        ("[CUDA memcpy DtoH]", 1), ("[CUDA memcpy HtoD]", 2), ("[CUDA memset]", 1), ("vectorAdd(int)", 1010)]
    assert any("1 row(s) of nsys report cuda_gpu_sum" in n and "repeat cuda_gpu_kern_sum of" in n for n in ps.notes)


def test_the_combined_report_alone_is_read_whole():
    ps, gpu = _gpu(_ALL)
    assert list(gpu["name"]) == ["vectorAdd(int)", "[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "[CUDA memset]"]
    assert not any("repeat" in n for n in ps.notes)


def test_a_kernel_split_by_launch_configuration_matches_its_combined_row():
    kern = """[6/9] Executing 'cuda_gpu_kern_sum' stats report

 Time (%)  Total Time (ns)  Instances  Avg (ns)  Min (ns)  Max (ns)     GridXYZ         BlockXYZ          Name
 --------  ---------------  ---------  --------  --------  --------  --------------  --------------  --------------
     60.0        1,098,296        606   1,812.4     1,792     2,752    90    1    1    16   16    1  vectorAdd(int)
     40.0          732,197        404   1,812.4     1,792     2,752    45    1    1    16   16    1  vectorAdd(int)
"""
    ps, gpu = _gpu(kern + "\n" + _ALL)
    names = list(gpu["name"])
    assert names.count("vectorAdd(int)") == 0 and sum(n.startswith("vectorAdd(int) [grid") for n in names) == 2
    assert int(gpu["calls"].sum()) == 606 + 404 + 2 + 1 + 1
