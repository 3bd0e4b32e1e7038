"""Real OpenACC timing logs, value for value: PGI/NVHPC "Accelerator Kernel Timing data" (PGI_ACC_TIME /
NV_ACC_TIME, PGI 2012 to NVHPC 22.7) under tests/data/acc-time/.

Each log was copied from a public repository; its row in tests/data/SOURCES.md gives repository, path
and commit (the first corpus in its "Table", later logs under the batch named in the comment above
their cases). Values were checked by hand against the lines they come from; tests/real_logs.py says
what a case holds.

Below the logs: the class they revealed (a function's source file named in any path form). nvprof's
OpenACC rows are in test_parse_real_nvprof.py, OpenACC timing pasted into documents in
test_parse_real_pasted.py.
"""

from __future__ import annotations

import pytest

from tests.real_logs import Case, check_case, check_listed_once, check_top_row, parse_text_file

# fmt: off
# (file, profiles, rows, ranked section of profile 1, its top row's name (prefix), total ns, calls,
#  rows in the >=90% set, unplaced lines): tests/real_logs.py check_top_row
TOP_ROWS = [
    # the first corpus: SOURCES.md "Table"
    ('acc-time/denismihailapov-lab1-sin-float-pgi-minfo.log', 1, 8, 'gpu', 'main@calc_sin.c:26 kernel', 278000.0, 1, 2, 0),
    ('acc-time/denismihailapov-lab2-heat-n128-multifunc.log', 1, 20, 'gpu', 'main@term_cond_acc.c:103 kernel', 50627000.0, 746, 4, 0),
    ('acc-time/mrprajesh-openacc-cmake-hello-nvhpc22.7.log', 1, 7, 'gpu', 'main@hello.cpp:33 kernel', 44613000.0, 1, 3, 0),
    ('acc-time/oliatsm-cnn-cifar10-nvhpc-acc-time.log', 1, 80, 'gpu', 'relu_forward@layers.c:118 kernel', 2041325000.0, 150000, 7, 0),
]

CASES = [
    # SOURCES.md "Batch 2"
    Case('acc-time/dmikushin-kernelgen-pgi2012-sincos-fortran-no-separators.log',
         tools=('nvhpc-acc',), rows=2, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'openacc'): 1},
         tops=[(1, 'gpu', 'sincos@sincos.f90:15 kernel', 1),
               (1, 'openacc', 'sincos@sincos.f90:12 region', 1)],
         checks=[
             (1, 'gpu', 'sincos@sincos.f90:15 kernel', 3575000.0, 1, 3575000.0),
             (1, 'openacc', 'sincos@sincos.f90:12 region', 2362577000.0, 1, None),
         ],
         notes=[]),
    Case('acc-time/essentialsofpc-ch11-streamtriad-7-programs.log',
         tools=('nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc'), rows=55, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'openacc'): 7, (2, 'gpu'): 2, (2, 'openacc'): 7,
                   (3, 'gpu'): 2, (3, 'openacc'): 7, (4, 'gpu'): 2, (4, 'openacc'): 7,
                   (5, 'gpu'): 2, (5, 'openacc'): 5, (6, 'gpu'): 2, (6, 'openacc'): 6,
                   (7, 'gpu'): 2, (7, 'openacc'): 2},
         tops=[(1, 'gpu', 'main@StreamTriad_kern1.c:26 kernel', 1),
               (1, 'openacc', 'main@StreamTriad_kern1.c:25 data copyin transfers', 2),
               (2, 'gpu', 'main@StreamTriad_kern2.c:29 kernel', 1),
               (2, 'openacc', 'main@StreamTriad_kern2.c:28 data copyin transfers', 2),
               (3, 'gpu', 'main@StreamTriad_kern2.c:29 kernel', 1),
               (3, 'openacc', 'main@StreamTriad_kern2.c:28 data copyin transfers', 2),
               (4, 'gpu', 'main@StreamTriad_par1.c:25 kernel', 1),
               (4, 'openacc', 'main@StreamTriad_par1.c:25 data copyin transfers', 2),
               (5, 'gpu', 'main@StreamTriad_par2.c:28 kernel', 1),
               (5, 'openacc', 'main@StreamTriad_par2.c:13 data region', 0),
               (6, 'gpu', 'main@StreamTriad_par3.c:27 kernel', 1),
               (6, 'openacc', 'main@StreamTriad_par3.c:13 data region', 0),
               (7, 'gpu', 'main@StreamTriad_par4.c:26 kernel', 1),
               (7, 'openacc', 'main@StreamTriad_par4.c:17 compute region', 0)],
         checks=[
             (1, 'gpu', 'main@StreamTriad_kern1.c:26 kernel', 26448866000.0, 16, 1653054000.0),
             (1, 'gpu', 'main@StreamTriad_kern1.c:17 kernel', 362000.0, 1, 362000.0),
             (1, 'openacc', 'main@StreamTriad_kern1.c:25 data copyin transfers', 415826000.0, 320, 1299000.0),
             (1, 'openacc', 'main@StreamTriad_kern1.c:25 data region', None, 32, None),
             (2, 'gpu', 'main@StreamTriad_kern2.c:29 kernel', 9159000.0, 16, 572000.0),
             (2, 'gpu', 'main@StreamTriad_kern2.c:19 kernel', 360000.0, 1, 360000.0),
             (2, 'openacc', 'main@StreamTriad_kern2.c:28 data copyin transfers', 415305000.0, 320, 1297000.0),
             (2, 'openacc', 'main@StreamTriad_kern2.c:28 data region', None, 32, None),
             (3, 'gpu', 'main@StreamTriad_kern2.c:29 kernel', 9154000.0, 16, 572000.0),
             (3, 'gpu', 'main@StreamTriad_kern2.c:19 kernel', 360000.0, 1, 360000.0),
             (3, 'openacc', 'main@StreamTriad_kern2.c:28 data copyin transfers', 415338000.0, 320, 1297000.0),
             (3, 'openacc', 'main@StreamTriad_kern2.c:28 data region', None, 32, None),
             (4, 'gpu', 'main@StreamTriad_par1.c:25 kernel', 9144000.0, 16, 571000.0),
             (4, 'gpu', 'main@StreamTriad_par1.c:16 kernel', 361000.0, 1, 361000.0),
             (4, 'openacc', 'main@StreamTriad_par1.c:25 data copyin transfers', 418413000.0, 320, 1307000.0),
             (4, 'openacc', 'main@StreamTriad_par1.c:25 data region', None, 32, None),
             (5, 'gpu', 'main@StreamTriad_par2.c:28 kernel', 9087000.0, 16, 567000.0),
             (5, 'gpu', 'main@StreamTriad_par2.c:19 kernel', 361000.0, 1, 361000.0),
             (5, 'openacc', 'main@StreamTriad_par2.c:13 data region', None, 2, None),
             (5, 'openacc', 'main@StreamTriad_par2.c:28 data region', None, 32, None),
             (6, 'gpu', 'main@StreamTriad_par3.c:27 kernel', 9085000.0, 16, 567000.0),
             (6, 'gpu', 'main@StreamTriad_par3.c:18 kernel', 360000.0, 1, 360000.0),
             (6, 'openacc', 'main@StreamTriad_par3.c:13 data region', None, 1, None),
             (6, 'openacc', 'main@StreamTriad_par3.c:36 data region', None, 1, None),
             (7, 'gpu', 'main@StreamTriad_par4.c:26 kernel', 9092000.0, 16, 568000.0),
             (7, 'gpu', 'main@StreamTriad_par4.c:17 kernel', 361000.0, 1, 361000.0),
             (7, 'openacc', 'main@StreamTriad_par4.c:17 compute region', None, 1, None),
             (7, 'openacc', 'main@StreamTriad_par4.c:26 compute region', None, 16, None),
         ],
         notes=[]),
    # SOURCES.md "Batch 5a"
    Case('acc-time/b5a-milladgit-comd-pgi18.10-update-directive-transfers-memutils-h.log',
         tools=('nvhpc-acc',), rows=30, unplaced=0,
         sections={(1, 'gpu'): 8, (1, 'openacc'): 22},
         tops=[(1, 'gpu', 'ljForce@ljForce.c:200 kernel', 1),
               (1, 'openacc', 'updateGPU@timestep.c:140 data copyin transfers', 2)],
         checks=[
             (1, 'gpu', 'ljForce@ljForce.c:200 kernel', 1116045000.0, 101, 11049000.0),
             (1, 'gpu', 'kineticEnergy@timestep.c:192 reduction kernel', 44000.0, 11, 4000.0),
             (1, 'gpu', 'transferToGPU@memUtils.h:34 kernel', 5495000.0, 2744, 2000.0),  # inside the line-55 region
             (1, 'openacc', 'updateHost@timestep.c:101 update directive', None, 100, None),
             (1, 'openacc', 'updateHost@timestep.c:101 data copyout transfers', 291948000.0, 600, 486000.0),
             (1, 'openacc', 'updateGPU@timestep.c:140 data copyin transfers', 480251000.0, 600, 800000.0),
             (1, 'openacc', 'transferToGPU@memUtils.h:55 data region', None, 1, None),  # 'reached 1 time'
             (1, 'openacc', 'transferToGPU@memUtils.h:56 data copyin transfers', 5040000.0, 7, 720000.0),
         ],
         notes=[]),
    Case('acc-time/b5a-usnistgov-hiperc-issue49-pgi17-tilde-paths-cut-excerpt.md.log',
         tools=('nvhpc-acc',), rows=5, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'openacc'): 3},
         tops=[(1, 'gpu', 'convolution_kernel@openacc_discretization.c:35 kernel', 1)],
         checks=[
             (1, 'gpu', 'convolution_kernel@openacc_discretization.c:35 kernel', 16020256000.0, 100000, 160000.0),
             (1, 'gpu', 'diffusion_kernel@openacc_discretization.c:57 kernel', None, 100000, None),  # cut before its times
             (1, 'openacc', 'convolution_kernel@openacc_discretization.c:35 data region', None, 200000, None),
             (1, 'openacc', 'diffusion_kernel@openacc_discretization.c:57 compute region', None, 100000, None),
         ],
         notes=[]),
]
# fmt: on


@pytest.mark.parametrize("case", TOP_ROWS, ids=lambda c: c[0])
def test_openacc_log_top_row(case):
    check_top_row(case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_openacc_log(case):
    check_case(case)


def test_openacc_logs_are_listed_once():
    check_listed_once([c.path for c in CASES])


# ---------------------------------------------------------------- classes


ACC_PATHS = """Accelerator Kernel Timing data
{path}
  jacobi  NVIDIA  devicenum=0
    time(us): 1,234
    35: compute region reached 10 times
        35: kernel launched 10 times
            grid: [64]  block: [128]
             device time(us): total=1,234 max=130 min=120 avg=123
"""


@pytest.mark.parametrize(("path", "file"), [
    ("~/hiperc/gpu-openacc-diffusion/openacc_discretization.c", "openacc_discretization.c"),
    ("./src/jacobi.F90", "jacobi.F90"),
    ("../common/laplace2d.cpp", "laplace2d.cpp"),
    ("src/solver/jacobi.cu", "jacobi.cu"),
    ("/home/u/acc/memUtils.h", "memUtils.h"),
    ("C:\\Users\\Ana María\\lab3\\jacobi.c", "jacobi.c"),
])
def test_openacc_source_lines_in_any_path_form(tmp_path, path, file):
    """The line naming the source file of the functions below it, at column 0, in any path form:
    home-relative ('~/…', PGI prints the path as given to the compiler), dot-relative, relative,
    absolute, a drive letter. Before: only absolute paths and bare file names were taken, so rows of
    '~/…' sources lost their file ('jacobi:35 kernel')."""
    ps = parse_text_file(tmp_path, ACC_PATHS.format(path=path))
    f = ps.frame
    assert ps.unplaced == []
    assert list(f[f["section"] == "gpu"]["name"]) == [f"jacobi@{file}:35 kernel"]
    assert list(f[f["section"] == "gpu"]["total_ns"]) == [1234000.0]
