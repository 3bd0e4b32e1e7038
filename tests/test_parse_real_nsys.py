"""Real Nsight Systems logs, value for value, and the classes of nsys output they revealed.

The logs: tests/data/nsys-text/ and nsys-csv/, `nsys profile --stats=true` / `nsys stats` output of
versions 2019.5 to 2025 (legacy titled tables, numbered reports, CSV, tables kept in READMEs), and an
`nsys analyze` rules output that holds no summary.
Each log was copied from a public repository; its row in tests/data/SOURCES.md gives repository, path
and commit (the first corpus in its "Table", later logs under the batch named in the comment above
their cases). Values were checked by hand against the lines they come from; tests/real_logs.py says
what a case holds.

Below the logs: synthetic tests of each class of nsys output a log revealed (summaries split by launch
configuration, GPU traces printed as tables, tables copied from the GUI, space-grouped numbers, the
decimal mark of size tables, reports that are not per-name summaries, a run that saved its report
only), so a fix holds for the class. nsys tables pasted into documents are in test_parse_real_pasted.py.
"""

from __future__ import annotations

import pandas as pd
import pytest

import profconv
from profconv.errors import NoProfileFound
from profconv.parse import units
from tests.real_logs import DATA, Case, check_case, check_listed_once, check_no_profile, check_top_row, parse_text_file
from tests.test_parse_real_ncu import NCU_SUMMARY

_COMMENT_NOTE = "1 row(s) end with a comment"

# fmt: off
# (file, profiles, rows, ranked section of profile 1, its top row's name (prefix), total ns, calls,
#  rows in the >=90% set, unplaced lines): tests/real_logs.py check_top_row
TOP_ROWS = [
    # the first corpus: SOURCES.md "Table"
    ('nsys-csv/chukonu-mineru-nsys-stats-csv-osrt-only.log', 1, 61, 'os-runtime', 'pthread_cond_wait', 4467639532177.0, 316, 3, 0),
    ('nsys-csv/comp-physics-rosenna-cuda-api-sum-quiet.log', 1, 2, 'api', 'cudaLaunchKernel', 88330.0, 1, 1, 0),
    ('nsys-csv/littlelittlecloud-dotllm-kern-sum-rtx4090-win.log', 1, 15, 'gpu', 'flash_attention_prefill_f16', 99385786.0, 32, 4, 0),
    ('nsys-text/ayush-os-a100-vectoradd-stats.log', 1, 40, 'gpu', 'vectorAdd(const float *, const float *, float *, int)', 1830493.0, 1010, 1, 0),
    ('nsys-text/comp-physics-rosenna-nvhpc25.11-nvtx-capture.log', 1, 3, 'nvtx', ':rosenna_timed', 143045.0, 1, 1, 0),
    ('nsys-text/f64081169-jetson-trt-yolo-4digit-grouping.log', 1, 160, 'gpu', '[CUDA memcpy HtoD]', 2218247417.0, 12981, 18, 0),
    ('nsys-text/iidyc-gpu-mvr-stats-cuvs-cub.log', 1, 92, 'gpu', '[CUDA memcpy Host-to-Device]', 3727343921.0, 20523, 9, 0),
    ('nsys-text/lukas-ruettgers-dphpc-cutlass-gemm-progressbars.log', 1, 13, 'gpu', '[CUDA memcpy Host-to-Device]', 10427581.0, 3, 2, 0),
    ('nsys-text/moomoohorse-ece408-nsys2019.5.2-rai.log', 1, 37, 'gpu', '[CUDA memcpy DtoH]', 972281014.0, 6, 2, 0),
    ('nsys-text/oliatsm-cnn-cifar10-openacc-stats.log', 1, 193, 'gpu', '[CUDA memcpy Host-to-Device]', 810433825.0, 150038, 9, 0),
    ('nsys-text/samhachem99-legacy-stats-vector-add.log', 4, 220, 'os-runtime', 'epoll_wait', 5511756619.0, 461, 4, 0),
    ('nsys-text/zx3xyy-nsys2024.6.2-stats-pytorch-2.7B.log', 1, 97, 'gpu', '[CUDA memcpy Host-to-Device]', 4460346194.0, 294, 2, 0),
]

CASES = [
    # SOURCES.md "Batch 2"
    Case('nsys-text/amacharla15-resnet50-nsys-progress-lines-excerpt.log',
         tools=('nsys',), rows=33, unplaced=0,
         sections={(1, 'nvtx'): 1, (1, 'os-runtime'): 32},
         tops=[(1, 'nvtx', ':resnet50_inference', 1),
               (1, 'os-runtime', 'poll', 1)],
         checks=[
             (1, 'nvtx', ':resnet50_inference', 101592786.0, 1, 101592786.0),
             (1, 'os-runtime', 'poll', 3041609958.0, 153, 19879803.6),
             (1, 'os-runtime', 'listen', 1071.0, 1, 1071.0),
         ],
         notes=[]),
    Case('nsys-text/andrew-gan-cuot-nsys2021-legacy-titles.log',
         tools=('nsys',), rows=50, unplaced=0,
         sections={(1, 'api'): 7, (1, 'gpu'): 11, (1, 'gpu-memory-size'): 3, (1, 'os-runtime'): 29},
         tops=[(1, 'gpu', 'mat_vec_hash(Vector, unsigned char*, Matrix, Vecto', 3),
               (1, 'api', 'cudaMalloc', 1),
               (1, 'os-runtime', 'pthread_join', 4)],
         checks=[
             (1, 'gpu', 'mat_vec_hash(Vector, unsigned char*, Matrix, Vecto', 12758593.0, 3, 4252864.3),
             (1, 'gpu', '[CUDA memset]', 5152.0, 3, 1717.3),
             (1, 'api', 'cudaMalloc', 707514600.0, 132, 5359959.1),
             (1, 'api', 'cuInit', 1429.0, 1, 1429.0),
             (1, 'os-runtime', 'pthread_join', 413824285.0, 1, 413824285.0),
             (1, 'os-runtime', 'bind', 1915.0, 1, 1915.0),
         ],
         notes=['profile 1, gpu table, lines 19-36: merged from 2 source tables (starting at lines 19, 34);']),
    Case('nsys-text/meanpaper-ece408-m2-nsys-legacy-with-time-output.log',
         tools=('nsys',), rows=37, unplaced=0,
         sections={(1, 'api'): 5, (1, 'gpu'): 5, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 25},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 2),
               (1, 'api', 'cudaMemcpy', 2),
               (1, 'os-runtime', 'sem_timedwait', 4)],
         checks=[
             (1, 'gpu', '[CUDA memcpy DtoH]', 951550648.0, 2, 475775324.0),
             (1, 'gpu', 'prefn_marker_kernel', 2720.0, 2, 1360.0),
             (1, 'api', 'cudaMemcpy', 1031016980.0, 8, 128877122.5),
             (1, 'api', 'cudaFree', 2781895.0, 8, 347736.9),
             (1, 'os-runtime', 'sem_timedwait', 95936240539.0, 973, 98598397.3),
             (1, 'os-runtime', 'bind', 1845.0, 1, 1845.0),
         ],
         notes=['profile 1, gpu table, lines 78-91: merged from 2 source tables (starting at lines 78, 89);']),
    # SOURCES.md "Batch 3"
    Case('nsys-text/xiaoniaogangsi-ece408fa23-m3-nsys2019-then-ncu-report-only.log',
         tools=('nsys',), rows=38, unplaced=0,
         sections={(1, 'api'): 5, (1, 'gpu'): 5, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 26},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 2), (1, 'api', 'cudaMemcpy', 3)],
         checks=[
             (1, 'gpu', 'conv_forward_kernel', 148316211.0, 6, 24719368.5),
             (1, 'gpu', '[CUDA memcpy HtoD]', 38989824.0, 14, 2784987.4),
             (1, 'api', 'cudaMemcpy', 552532423.0, 20, 27626621.1),
             (1, 'os-runtime', 'pthread_cond_wait', 18082270809.0, 2, 9041135404.5),
         ],
         notes=['profile 1, gpu table, lines 115-125: merged from 2 source tables']),
    Case('nsys-text/hacheng-ece408sp25-op0-nsys-glued-progress-gridxyz-kernsum.log',
         tools=('nsys',), rows=43, unplaced=0,
         sections={(1, 'api'): 7, (1, 'gpu'): 6, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 28},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 4), (1, 'api', 'cudaMemcpy', 3), (1, 'os-runtime', 'poll', 1)],
         checks=[
             (1, 'gpu', 'matmul_conv_fused_with_constant_mask(const float *, float *, int, int, int, int, int, int) '
                        '[grid 4000000x1x1, block 16x16x1]', 41443384.0, 1, 41443384.0),
             (1, 'gpu', 'matmul_conv_fused_with_constant_mask(const float *, float *, int, int, int, int, int, int) '
                        '[grid 722500x1x1, block 16x16x1]', 49482541.0, 1, 49482541.0),
             (1, 'gpu', '[CUDA memcpy HtoD]', 41897284.0, 6, 6982880.7),
             (1, 'api', 'cudaMemcpyToSymbol', 324778.0, 2, 162389.0),
             (1, 'os-runtime', 'poll', 87714163913.0, 845, 103803744.3),
         ],
         notes=['profile 1, gpu table, lines 70-80: merged from 2 source tables']),
    # SOURCES.md "Batch 4"
    Case('nsys-text/mystous-vllm-hybrid-qwen7b-b200-nsys2025-format-table-grid-in-md.log',
         tools=('nsys',), rows=47, unplaced=0,
         sections={(1, 'api'): 18, (1, 'gpu'): 28, (1, 'nvtx'): 1},
         tops=[(1, 'gpu', 'fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCausalP16VarSeqQ128Kv128PersistentContext', 8),
               (1, 'api', 'cudaLaunchKernel', 5)],
         checks=[
             (1, 'gpu', 'fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCausalP16VarSeqQ128Kv128PersistentContext',
              24038586640.0, 333648, 72047.7),
             (1, 'gpu', 'ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)',
              979257472.0, 12884, 76005.7),
             (1, 'gpu', 'void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_twoshot_sync<(flashinfer::trtllm_…',
              88744119.0, 912, 97307.1),
             (1, 'api', 'cudaLaunchKernel', 5261402681.0, 1116364, 4713.0),
             (1, 'api', 'cuTensorMapEncodeTiled', 359996165.0, 3041024, 118.4),
             (1, 'api', 'cudaHostAlloc', 27771765.0, 80, 347147.1),
             (1, 'nvtx', 'NCCL:ncclAllGather', 448485486.0, 12884, 34809.5),
         ],
         notes=[]),
    Case('nsys-text/mystous-vllm-hybrid-r1-671b-b200-nsys2025-format-table-osrt-excerpt.log',
         tools=('nsys',), rows=56, unplaced=0,
         sections={(1, 'api'): 18, (1, 'gpu'): 33, (1, 'nvtx'): 1, (1, 'os-runtime'): 4},
         tops=[(1, 'api', 'cudaMemcpyAsync', 5), (1, 'os-runtime', 'poll', 4)],
         checks=[
             (1, 'gpu', 'kernel_cutlass_kernel_vllmvllm_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__t…',
              6970246136.0, 169011, 41241.4),
             (1, 'gpu', 'void <unnamed>::multimem_all_reduce_kernel<c10::BFloat16, (int)16>(T1 *, unsigned long, unsigned in…',
              76652072.0, 123, 623187.6),
             (1, 'api', 'cudaMemcpyAsync', 3521583822.0, 14529, 242383.1),
             (1, 'api', 'cuTensorMapEncodeTiled', 143928791.0, 1034953, 139.1),
             (1, 'nvtx', 'NCCL:ncclAllGather', 49650381851.0, 3968, 12512697.0),
             (1, 'os-runtime', 'poll', 6532794715988.0, 94192, 69356152.5),
             (1, 'os-runtime', 'sem_clockwait', 2130023510261.0, 213, 10000110376.8),
         ],
         notes=[]),
    # SOURCES.md "Batch 5b"
    Case('nsys-text/b5b-hthuz-ece408-nsys2019.5.2-fp16-row-split-in-name-padding.log',
         tools=('nsys',), rows=37, unplaced=0,
         sections={(1, 'api'): 5, (1, 'gpu'): 5, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 25},
         tops=[(1, 'api', 'cudaMemcpy', 2), (1, 'gpu', '[CUDA memcpy DtoH]', 2), (1, 'os-runtime', 'sem_timedwait', 4)],
         checks=[
             (1, 'api', 'cudaMemcpy', 581196667.0, 20, 29059833.4),
             (1, 'gpu', 'conv_forward_kernel', 52171241.0, 6, 8695206.8),
             (1, 'gpu', '[CUDA memcpy HtoD]', 45979929.0, 14, 3284280.6),
             (1, 'os-runtime', 'pthread_cond_wait', 16532313239.0, 2, 8266156619.5),
             (1, 'os-runtime', 'open', 29371.0, 5, 5874.2),  # the row broken inside its name padding
             (1, 'os-runtime', 'pipe2', 22798.0, 1, 22798.0),
             (1, 'os-runtime', 'listen', 1320.0, 1, 1320.0),
         ],
         notes=['profile 1, gpu table, lines 115-125: merged from 2 source tables']),
    Case('nsys-text/b5b-vinaatty-mnist-cudnn-korean-report-nsys2025-mem-time-and-size-mb-excerpt.md.log',
         tools=('nsys',), rows=8, unplaced=0,
         sections={(1, 'gpu'): 4, (1, 'gpu-memory-size'): 4},
         tops=[(1, 'gpu', '[CUDA memcpy Device-to-Device]', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy Device-to-Device]', 444289.0, 360, 1234.1),
             (1, 'gpu', '[CUDA memcpy Host-to-Device]', 443137.0, 196, 2260.9),
             (1, 'gpu', '[CUDA memset]', 7136.0, 4, 1784.0),
         ],
         notes=[]),
    Case('nsys-text/b5b-mbm6448-concurrent-streams-readme-nsys2021-stats-titles-report-moved.md.log',
         tools=('nsys',), rows=45, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 3, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 27},
         tops=[(1, 'api', 'cudaEventCreate', 4), (1, 'gpu', 'decrypt_gpu(unsigned long*, unsigned long, unsigned long)', 3),
               (1, 'os-runtime', 'poll', 3)],
         checks=[
             (1, 'api', 'cudaEventCreate', 315416188.0, 2, 157708094.0),
             (1, 'api', 'cudaEventDestroy', 5118.0, 2, 2559.0),
             (1, 'gpu', 'decrypt_gpu(unsigned long*, unsigned long, unsigned long)', 134096353.0, 8, 16762044.1),
             (1, 'gpu', '[CUDA memcpy DtoH]', 48880683.0, 8, 6110085.4),
             (1, 'os-runtime', 'pthread_mutex_trylock', 1117.0, 1, 1117.0),
         ],
         notes=['profile 1, gpu table, lines 48-57: merged from 2 source tables']),
    Case('nsys-text/b5b-mnicely-transfer-examples-readme-nsys2021-grouped-nvtx-pushpop-crlf.md.log',
         tools=('nsys',), rows=28, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 4, (1, 'gpu-memory-size'): 2, (1, 'nvtx'): 9},
         tops=[(1, 'api', 'cudaStreamSynchronize', 1), (1, 'gpu', '[CUDA memcpy DtoH]', 2), (1, 'nvtx', 'Process_Loop', 3)],
         checks=[
             (1, 'api', 'cudaStreamSynchronize', 7935281846.0, 30, 264509394.9),
             (1, 'gpu', 'void VectorOperation<Add<float>, float>(int, float, float*, Add<float>)', 67362653.0, 15, 4490843.5),
             (1, 'gpu', '[CUDA memcpy HtoD]', 5142402501.0, 30, 171413416.7),
             (1, 'nvtx', 'Process_Loop', 3889587729.0, 5, 777917545.8),
             (1, 'nvtx', 'D2H_B', 14849.0, 5, 2969.8),
         ],
         notes=['profile 1, gpu table, lines 91-101: merged from 2 source tables']),
    Case('nsys-text/b5b-qiyueliuhuo-cuda-course-zh-nsys2025-rows-annotated-with-hash-comments-excerpt.md.log',
         tools=('nsys',), rows=42, unplaced=0,
         sections={(1, 'api'): 6, (1, 'gpu'): 3, (1, 'gpu-memory-size'): 2, (1, 'nvtx'): 6, (1, 'os-runtime'): 25},
         tops=[(1, 'api', 'cudaMalloc', 1), (1, 'gpu', 'matrixMulKernel(...)', 3), (1, 'nvtx', ':Matrix Multiplication', 2),
               (1, 'os-runtime', 'poll', 2)],
         checks=[
             (1, 'nvtx', ':Memory Allocation', 323408432.0, 1, 323408432.0),
             (1, 'os-runtime', 'pthread_cond_broadcast', 1290.0, 1, 1290.0),  # one blank before its '#'
             (1, 'api', 'cuModuleGetLoadingMode', 677.0, 1, 677.0),
             (1, 'api', 'cudaDeviceSynchronize', 2645612.0, 1, 2645612.0),
             (1, 'gpu', 'matrixMulKernel(...)', 2644050.0, 1, 2644050.0),
             (1, 'gpu', '[CUDA memcpy Host-to-Device]', 1154050.0, 2, 577025.0),
         ],
         notes=['lines 112-116: nsys report cuda_memcpy_sync (an `nsys analyze` rule',
                'lines 135-137: nsys report cuda_api_sync (an `nsys analyze` rule',
                'lines 160-162: nsys report gpu_time_util (an `nsys analyze` rule',
                'profile 1, nvtx table, lines 20-25: 6 row(s) end with a comment',
                'profile 1, os-runtime table, lines 31-55: 25 row(s) end with a comment',
                'profile 1, api table, lines 61-66: 6 row(s) end with a comment',
                'profile 1, gpu table, lines 72-72: ' + _COMMENT_NOTE,
                'profile 1, gpu table, lines 78-79: 2 row(s) end with a comment',
                'profile 1, gpu table, lines 72-79: merged from 2 source tables',
                'profile 1, gpu-memory-size table, lines 85-86: 2 row(s) end with a comment']),
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [  # (file, why it holds no profile)
    # SOURCES.md "Batch 2"
    ("nsys-text/jellyfish227-nsys2023.1-analyze-rules-memcpy-sync-excerpt.log",
     "nsys expert-system rules: single slow calls, not a summary"),
]


@pytest.mark.parametrize("case", TOP_ROWS, ids=lambda c: c[0])
def test_nsys_log_top_row(case):
    check_top_row(case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_nsys_log(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_nsys_log_holds_no_profile(path, why, cli):
    line = check_no_profile(path, cli)
    assert "no profiler output" in line or "nothing to rank" in line


def test_nsys_logs_are_listed_once():
    check_listed_once([c.path for c in CASES] + [p for p, _ in NO_PROFILE])


# ---------------------------------------------------------------- classes


def test_nsys_expert_rules_output_says_what_it_is():
    with pytest.raises(NoProfileFound) as e:
        profconv.parse(DATA + "nsys-text/jellyfish227-nsys2023.1-analyze-rules-memcpy-sync-excerpt.log")
    assert str(e.value).endswith(": nsys expert-system rules output (cuda_memcpy_async, cuda_memcpy_sync) lists single "
                                 "slow calls, not a time summary: nothing to rank (`nsys stats` prints the summary tables)")


KERN_SUM_GRID = """[6/8] Executing 'cuda_gpu_kern_sum' stats report

 Time (%)  Total Time (ns)  Instances    Avg (ns)      Med (ns)     Min (ns)    Max (ns)   StdDev (ns)       GridXYZ          BlockXYZ                        Name                  
 --------  ---------------  ---------  ------------  ------------  ----------  ----------  -----------  -----------------  --------------  ------------------------------------
     54.4       49,482,541          1  49,482,541.0  49,482,541.0  49,482,541  49,482,541          0.0  722500    1    1     16   16    1  conv(const float *, float *, int)   
     45.6       41,443,384          1  41,443,384.0  41,443,384.0  41,443,384  41,443,384          0.0  4000000    1    1    16   16    1  conv(const float *, float *, int)   
"""


KERN_SUM_GRID_CSV = """Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),GridXYZ,BlockXYZ,Name
54.4,49482541,1,49482541.0,49482541.0,49482541,49482541,0.0,722500    1    1,16   16    1,"conv(const float *, float *, int)"
45.6,41443384,1,41443384.0,41443384.0,41443384,41443384,0.0,4000000    1    1,16   16    1,"conv(const float *, float *, int)"
"""


@pytest.mark.parametrize("text", [KERN_SUM_GRID, KERN_SUM_GRID_CSV], ids=["table", "csv"])
def test_kernel_summary_split_by_launch_configuration_keeps_it_in_the_name(tmp_path, text):
    """nsys (2024+) splits a kernel's summary rows by grid and block: two rows of one kernel are told
    apart by their launch configuration, never shown as two identical names (and the dims never read
    as times)."""
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert ps.unplaced == []
    assert list(f["name"]) == ["conv(const float *, float *, int) [grid 722500x1x1, block 16x16x1]",
                               "conv(const float *, float *, int) [grid 4000000x1x1, block 16x16x1]"]
    assert list(f["short_name"]) == ["conv [grid 722500x1x1, block 16x16x1]", "conv [grid 4000000x1x1, block 16x16x1]"]
    assert list(f["total_ns"]) == [49482541.0, 41443384.0]
    assert list(f["calls"]) == [1, 1]


NSYS_SPACE_GROUPED = """[5/8] Executing 'cuda_api_sum' stats report

Time (%)  Total Time (ns)  Num Calls    Avg (ns)      Med (ns)    Min (ns)   Max (ns)    StdDev (ns)           Name
--------  ---------------  ---------  ------------  ------------  --------  -----------  ------------  ----------------------
53,8      308 807 930          6  51 467 988,3  21 054 696,0    25 638  159 147 694  66 147 813,0  cudaMemcpy
29,4      168 909 846          6  28 151 641,0     181 280,0   143 469  167 549 424  68 290 998,3  cudaMalloc
16,8       95 886 463      1 024      93 639,1       8 195,5     4 389   49 486 501  23 613 085,1  cudaDeviceSynchronize
"""


def test_space_grouped_numbers_in_rows_that_lost_their_alignment(tmp_path):
    """A locale that groups digits with spaces ('308 807 930'), in rows that no longer line up with
    the header's dashes (re-indented in a paste): the groups are cut the one way whose cells agree
    (total = calls x avg, min <= avg <= max, max <= total); before, every row was reported."""
    ps = parse_text_file(tmp_path, NSYS_SPACE_GROUPED)
    f = ps.frame.set_index("name")
    assert ps.unplaced == []
    assert f.loc["cudaMemcpy", "total_ns"] == 308807930.0
    assert f.loc["cudaMemcpy", "med_ns"] == 21054696.0 and f.loc["cudaMemcpy", "min_ns"] == 25638.0
    assert f.loc["cudaMemcpy", "max_ns"] == 159147694.0 and f.loc["cudaMemcpy", "std_ns"] == 66147813.0
    assert f.loc["cudaDeviceSynchronize", "calls"] == 1024
    assert f.loc["cudaDeviceSynchronize", "avg_ns"] == 93639.1
    assert f.loc["cudaMalloc", "time_pct"] == 29.4


def test_space_grouped_numbers_cut_two_ways_are_reported_not_guessed(tmp_path):
    """'1 234 567' with single spaces throughout: 1,234 ns in 567 ranges, or 1 ns in 234,567? Nothing
    in the row tells: reported. With the columns two spaces apart ('1 234  567') there is one reading."""
    text = """ Time (%)  Total Time (ns)  Instances  Name
 --------  ---------------  ---------  --------
60,0 1 234 567 range_a
40,0  822  3  range_b
"""
    ps = parse_text_file(tmp_path, text)
    assert [n for n, _ in ps.unplaced] == [3]
    assert list(ps.frame["name"]) == ["range_b"]
    ps = parse_text_file(tmp_path, text.replace("60,0 1 234 567 range_a", "60,0  1 234  567  range_a"), "two.txt")
    assert ps.unplaced == []
    assert list(zip(ps.frame["total_ns"], ps.frame["calls"])) == [(1234.0, 567), (822.0, 3)]


def test_stats_table_copied_from_the_nsys_gui(tmp_path):
    """A table copied from the Nsight Systems GUI (tab-separated, 'Time' is the share, times carry
    their units: '583.496 μs', '991 ns'); before, its rows were dropped without a word. A cell without
    a unit is never read in a guessed one: that row is reported."""
    text = ("Time\tTotal Time\tInstances\tAvg\tMed\tMin\tMax\tStdDev\tCategory\tOperation\n"
            "84.4%\t87.524 s\t150000\t583.496 μs\t596.580 μs\t181.153 μs\t1.079 ms\t323.180 μs\tCUDA_KERNEL\tconv_forward_72_gpu\n"
            "2.8%\t2.878 s\t2011510\t1.430 μs\t991 ns\t480 ns\t39.808 μs\t1.656 μs\tMEMORY_OPER\t[CUDA memcpy Unified Device-to-Host]\n"
            "0.0%\t300.065\t3\t100.021 μs\t95.904 μs\t28.768 μs\t175.393 μs\t73.399 μs\tMEMORY_OPER\t[CUDA memset]\n")
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert [n for n, _ in ps.unplaced] == [4]
    assert list(f["name"]) == ["conv_forward_72_gpu", "[CUDA memcpy Unified Device-to-Host]"]
    assert list(f["section"]) == ["gpu", "gpu"]
    assert list(f["total_ns"]) == [87.524e9, 2.878e9]
    assert list(f["med_ns"]) == [596580.0, 991.0]
    assert list(f["calls"]) == [150000, 2011510]


@pytest.mark.parametrize("where", ["csv", "table"])
def test_carriage_return_inside_a_row_is_damage_not_a_digit_join(tmp_path, where):
    """A stray CR inside a number ('5\\r0.1', a terminal's overwrite) had been deleted, giving 50.1, a
    number the input never shows: the row is reported instead (found by the hypothesis fuzz)."""
    if where == "csv":
        text = ("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
                "5\r0.1,99385786,32,3105805.8,3041179.0,2987340,3777790,216832.4,flash_attention\n"
                "49.9,98990000,32,3093437.5,3041179.0,2987340,3777790,216832.4,gemm\n")
    else:
        text = ("[6/8] Executing 'cuda_gpu_kern_sum' stats report\n\n"
                " Time (%)  Total Time (ns)  Instances   Avg (ns)   Name\n"
                " --------  ---------------  ---------  ----------  ---------------\n"
                "     5\r0.1       99,385,786         32  3,105,805.8  flash_attention\n"
                "     49.9       98,990,000         32  3,093,437.5  gemm\n")
    p = tmp_path / "crlog.txt"
    p.write_bytes(text.encode())
    ps = profconv.parse(str(p))
    assert list(ps.frame["name"]) == ["gemm"]
    assert len(ps.unplaced) == 1 and "flash_attention" in ps.unplaced[0][1]


NSYS_GPU_TRACE = """nsys nvprof --print-gpu-trace ./cppintegration

Start (ns)   Duration (ns)  CorrId  GrdX  GrdY  GrdZ  BlkX  BlkY  BlkZ  Reg/Trd  StcSMem (MB)  DymSMem (MB)  Bytes (MB)  Throughput (MB/s)  SrcMemKd  DstMemKd            Device             Ctx  GreenCtx  Strm              Name            
 -----------  -------------  ------  ----  ----  ----  ----  ----  ----  -------  ------------  ------------  ----------  -----------------  --------  --------  ---------------------------  ---  --------  ----  ----------------------------
 288,824,971            672     128                                                                                0.000             23.810  Pageable  Device    NVIDIA GeForce RTX 3060 (0)    1               7  [CUDA memcpy Host-to-Device]
 291,473,497         65,025     131     1     1     1     4     1     1       32         0.000         0.000                                                     NVIDIA GeForce RTX 3060 (0)    1               7  kernel(int *)               
"""


NSYS_2020_GPU_TRACE = """Exporting [/soft/compilers/cuda/cuda-11.2.0/nsight-systems-2020.4.3/target-linux-x64/reports/gputrace.py report1.sqlite] to console... 

 Start(sec)  Duration(nsec)  CorrId  GrdX  GrdY  GrdZ  BlkX  BlkY  BlkZ  Reg/Trd  StcSMem  DymSMem    Bytes    Thru(MB/s)  SrcMemKd  DstMemKd        Device        Ctx  Strm                  Name                 
 ----------  --------------  ------  ----  ----  ----  ----  ----  ----  -------  -------  -------  ---------  ----------  --------  --------  ------------------  ---  ----  -------------------------------------
   0.355442           5,120      57                                                                         1       0.195  Device    Device    Tesla V100 (0)        1     7  [CUDA memset]
   0.355501          12,352      61   128     1     1   256     1     1       16        0        0                                             Tesla V100 (0)        1     7  vecAdd(float*, float*, float*, int)
"""


@pytest.mark.parametrize(("text", "starts"), [(NSYS_GPU_TRACE, [288824971.0, 291473497.0]),
                                              (NSYS_2020_GPU_TRACE, [355442000.0, 355501000.0])],
                         ids=["nsys-nvprof-2024", "stats-gputrace-2020-seconds"])
def test_nsys_gpu_trace_printed_as_a_table(tmp_path, text, starts):
    """`nsys nvprof --print-gpu-trace` / `nsys stats -r gputrace` printed as a console table: blank
    grid and memcpy cells, a header not indented like its dashes, 'Start(sec)' in seconds (2020).
    Before: 'no profiler output found' (or rows in the wrong section with no times)."""
    ps = parse_text_file(tmp_path, text)
    assert ps.unplaced == []
    assert set(ps.frame["section"]) == {"gpu-trace", "gpu"}  # the trace and its per-name summary
    f = ps.frame[ps.frame["section"] == "gpu-trace"]
    assert list(f["start_ns"]) == pytest.approx(starts, rel=1e-12)
    assert list(f["total_ns"])[1] in (65025.0, 12352.0)
    assert list(f["name"])[1] in ("kernel(int *)", "vecAdd(float*, float*, float*, int)")


def test_damaged_rows_found_by_mutating_these_classes_are_reported(tmp_path):
    """Mutations of the inputs above (a digit group lost, a line shifted) once gave numbers the input
    never shows: a grouped row whose only reading disagrees with itself, a space-grouped number cut
    by a header column, a --print-summary row shifted under its columns. Each is reported now."""
    damaged = NSYS_SPACE_GROUPED.replace("167 549 424  68 290", "167 549 42 68 290")  # cudaMalloc's max lost a digit
    ps = parse_text_file(tmp_path, damaged)
    assert [n for n, _ in ps.unplaced] == [6] and "cudaMalloc" not in list(ps.frame["name"])
    shifted = NCU_SUMMARY.replace("      gpu__compute_memory_throughput", "      __compute_memory_throughput")
    ps = parse_text_file(tmp_path, shifted, "ncu.txt")
    assert [n for n, _ in ps.unplaced] == [9]
    assert 6.59 not in list(ps.frame["value"])


def test_nsys_sizes_and_crlf_kept():
    """The size tables' bytes (MB are 10^6 bytes, KiB 1024) and the CRLF file read like an LF one."""
    f = parse_text_file_frame("nsys-text/b5b-vinaatty-mnist-cudnn-korean-report-nsys2025-mem-time-and-size-mb-excerpt.md.log")
    sizes = f[f["section"] == "gpu-memory-size"].set_index("name")["bytes"]
    assert sizes.to_dict() == {"[CUDA memcpy Host-to-Device]": 3821000.0, "[CUDA memcpy Device-to-Device]": 275000.0,
                               "[CUDA memset]": 52000.0, "[CUDA memcpy Device-to-Host]": 5000.0}
    f = parse_text_file_frame("nsys-text/b5b-mnicely-transfer-examples-readme-nsys2021-grouped-nvtx-pushpop-crlf.md.log")
    assert list(f[f["section"] == "gpu-memory-size"]["bytes"]) == [32212254720.0, 32212254720.0]  # 31,457,280.000 KiB
    f = parse_text_file_frame("nsys-text/b5b-hthuz-ece408-nsys2019.5.2-fp16-row-split-in-name-padding.log")
    assert list(f[f["section"] == "gpu-memory-size"]["bytes"]) == [862672.0 * 1024, 276206.0 * 1024]


def parse_text_file_frame(path: str) -> pd.DataFrame:
    import profconv

    return profconv.parse("tests/data/" + path).frame


SIZE_MB = """[8/8] Executing 'cuda_gpu_mem_size_sum' stats report

 Total (MB)  Count  Avg (MB)  Med (MB)  Min (MB)  Max (MB)  StdDev (MB)           Operation
 ----------  -----  --------  --------  --------  --------  -----------  ----------------------------
      8.389      2     4.194     4.194     4.194     4.194        0.000  [CUDA memcpy Host-to-Device]
      4.194      1     4.194     4.194     4.194     4.194        0.000  [CUDA memcpy Device-to-Host]
"""


def test_size_table_decimal_mark_read_from_every_column(tmp_path):
    """A memory-size table keeps only its Total, but every column tells the decimal mark: '0.000'
    (StdDev) cannot be a thousands group, so '8.389' MB is 8,389,000 bytes. Before: the Totals alone
    ('8.389', '4.194') read either way, the table was called ambiguous and its sizes left empty."""
    ps = parse_text_file(tmp_path, SIZE_MB)
    assert list(ps.frame["bytes"]) == [8389000.0, 4194000.0]
    assert ps.notes == []


def test_a_number_whose_head_is_longer_than_a_group_is_not_grouped(tmp_path):
    """'524288.000' or '1454.730' cannot be thousands grouping (a group head has 1-3 digits): the
    mark is the decimal one, so such a table is not called ambiguous ('1.234' still is, when no cell
    decides). Before: a KiB table whose numbers all end in '.000' got the note that its cells were
    left empty, though none was."""
    assert units.decide_locale(["524288.000", "65536.000"]) == units.C_LOCALE
    assert units.decide_locale(["1454,730"]) == units.COMMA_LOCALE
    assert units.decide_locale(["1.234"]).ambiguous
    assert units.decide_locale(["1.234", "0.500"]) == units.C_LOCALE
    text = ("CUDA Memory Operation Statistics (by size in KiB):\n\n"
            "   Total     Operations   Average    Minimum    Maximum       Operation     \n"
            " ----------  ----------  ---------  ---------  ---------  ------------------\n"
            " 524288.000           8  65536.000  65536.000  65536.000  [CUDA memcpy DtoH]\n")
    ps = parse_text_file(tmp_path, text)
    assert list(ps.frame["bytes"]) == [524288.0 * 1024] and ps.notes == []


NSYS_SAVED_ONLY = """WARNING: loops and any of its children processes will be profiled.

Collecting data...

The target application terminated with signal 4 (SIGILL)
Processing events...
Saving temporary "/tmp/nsys-report-aba0-a14b.qdstrm" file to disk...
Creating final output files...

Processing [==============================================================100%]
Saved report file to "/tmp/nsys-report-aba0-a14b.qdrep"
Report file moved to "/home/student/lab4/report3.qdrep"
"""


def test_nsys_2020_run_without_stats_says_where_the_report_is(tmp_path):
    """nsys 2020-2021 without --stats prints 'Saved report file to "….qdrep"' (and where it was moved):
    the error names the report and the command that prints its tables. Before: 'no profiler output'."""
    from profconv.errors import NoProfileFound

    with pytest.raises(NoProfileFound) as e:
        parse_text_file(tmp_path, NSYS_SAVED_ONLY)
    assert str(e.value).endswith(": no profiler output found: Nsight Systems saved its results in "
                                 "/home/student/lab4/report3.qdrep instead of printing them "
                                 "(`nsys stats /home/student/lab4/report3.qdrep` prints them as text)")
    with pytest.raises(NoProfileFound) as e:
        parse_text_file(tmp_path, NSYS_SAVED_ONLY.replace('Report file moved to "/home/student/lab4/report3.qdrep"\n', ""))
    assert "saved its results in /tmp/nsys-report-aba0-a14b.qdrep instead" in str(e.value)


KERN_EXEC = """[6/8] Executing 'cuda_gpu_kern_sum' stats report

 Time (%)  Total Time (ns)  Instances  Avg (ns)   Med (ns)   Min (ns)  Max (ns)  StdDev (ns)        Name
 --------  ---------------  ---------  ---------  ---------  --------  --------  -----------  ---------------
    100.0        1,132,611          2  566,305.5  566,305.5   566,000   566,611        432.0  matmul_gpu(int)

[7/8] Executing 'cuda_kern_exec_sum' stats report

 PID  TID  Count  QCount  TAvg (ns)  AAvg (ns)  KAvg (ns)  KMin (ns)  KMax (ns)     API Name         Kernel Name
 ---  ---  -----  ------  ---------  ---------  ---------  ---------  ---------  ----------------  ---------------
  42   42      2       0  570,000.0    3,500.0  566,305.5    566,000    566,611  cudaLaunchKernel  matmul_gpu(int)

Processing [report1.sqlite] with [/opt/nvidia/nsight-systems/2024.6.2/host-linux-x64/reports/nvtx_gpu_proj_sum.py]...

 ** NVTX GPU Projection Summary (nvtx_gpu_proj_sum):

Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),Proj Med (ns),Proj Min (ns),Proj Max (ns)
:step,PushPop,1132611,1200000,2,566305.5,566305.5,566000,566611
"""


def test_nsys_reports_that_are_not_per_name_summaries_are_not_read(tmp_path):
    """Named nsys reports that are not one per-name time summary (cuda_kern_exec_sum's launch/queue/
    execution times per kernel and API, nvtx_gpu_proj_sum's ranges projected onto the GPU, nvtx_kern_sum,
    um_sum …) are claimed, not read, and a note names them. Before: an unknown report was read as GPU
    activities, so cuda_kern_exec_sum's rows counted every kernel's launches twice next to
    cuda_gpu_kern_sum, and NVTX ranges were ranked as GPU activities."""
    ps = parse_text_file(tmp_path, KERN_EXEC)
    f = ps.frame
    assert list(zip(f["section"], f["name"], f["calls"], f["total_ns"])) == [("gpu", "matmul_gpu(int)", 2, 1132611.0)]
    assert [n.split(" (")[0] for n in ps.notes] == ["lines 9-11: nsys report cuda_kern_exec_sum",
                                                    "lines 17-18: nsys report nvtx_gpu_proj_sum"]
    assert ps.unplaced == []


UM_CSV = """\
Processing [run0.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... 
Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
60.0,6000,2,3000.0,3000.0,2000,4000,1414.2,kern_a
40.0,4000,1,4000.0,4000.0,4000,4000,0.0,kern_b

Processing [run0.sqlite] with [/opt/nsys/reports/um_total_sum.py]... 
Total HtoD Migration Size (MB),Total DtoH Migration Size (MB),Total CPU Page Faults,Total GPU PageFaults,Minimum Virtual Address,Maximum Virtual Address
32.030,83.103,725,234,0x7f0000000000,0x7fff00000000

Processing [run0.sqlite] with [/opt/nsys/reports/um_cpu_page_faults_sum.py]... 
CPU Page Faults,CPU Instruction Address
36,0x3cc75f3e
43,0xef40af2e
"""


def test_an_unread_reports_two_field_csv_table_is_noted(tmp_path):
    """um_cpu_page_faults_sum prints two fields ('CPU Page Faults,CPU Instruction Address'): its table is
    claimed with a note like any report profconv does not read. Before: a CSV table of one comma a line was
    not taken for a table -- its lines were neither read, noted nor reported unplaced (silently dropped)."""
    ps = parse_text_file(tmp_path, UM_CSV)
    assert list(ps.frame["name"]) == ["kern_a", "kern_b"]
    assert [n.split(" (")[0] for n in ps.notes] == ["lines 7-8: nsys report um_total_sum",
                                                    "lines 11-13: nsys report um_cpu_page_faults_sum"]
    assert ps.unplaced == []
