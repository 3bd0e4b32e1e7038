"""first-contact-2.md m7/m8 and the terminal's Metrics table cap (issue 26, issue 23):
- m7: a kernel name nsys cut inside its argument list ('k(const float *, …') is shortened at its
  '(' as a whole name is, not printed over five lines at 80 columns;
- m8: a section merged from several nsys tables (kernels and memory operations) shows no Time(%)
  column: each printed Time(%) is of its own table and contradicted the Share beside it (memcpy
  53.10 next to 0.13%); the note beside the table says why;
- an ncu page of a million metric rows prints the first 1,000 in the terminal (--all: every one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profconv.parse.names import short_name
from tests.test_parse_ncu_raw import page

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(("name", "short"), [
    ("stage2_binary_ip_kernel_v2(const float *, const char *, const float *, const float *, const unsigne…",
     "stage2_binary_ip_kernel_v2"),
    ("aggregate_stage1_atomic_kernel_opt(const unsigned long *, const float *, const int *, const int *, …",
     "aggregate_stage1_atomic_kernel_opt"),
    ("void cuvs::neighbors::cagra::detail::multi_cta_search::search_kernel<(unsigned int)128, cuvs::neigh…",
     "cuvs::neighbors::cagra::detail::multi_cta_search::search_kernel<…>"),
    ("k(int, float...", "k"),
    ("a_long_kernel_name_cut_before_its_arguments…", "a_long_kernel_name_cut_before_its_arguments…"),
    ("void k<float>(float*, int)", "k<…>"),
])
def test_cut_names_lose_their_argument_list(name, short):
    assert short_name(name) == short


def test_cut_name_in_the_terminal(cli):
    r = cli("parse", str(DATA / "nsys-text" / "iidyc-gpu-mvr-stats-cuvs-cub.log"), "--width", "80")
    assert r.returncode == 0
    assert "stage2_binary_ip_kernel_v2\n" in r.stdout and "const float *" not in r.stdout


def test_merged_nsys_table_shows_no_time_pct(cli):
    r = cli("parse", str(DATA / "nsys-text" / "ayush-os-a100-vectoradd-stats.log"), "--width", "160")
    gpu = r.stdout[r.stdout.index("GPU activities"):]
    gpu = gpu[: gpu.index("●", gpu.index("Name"))]
    assert "Time(%)" not in gpu.split("\n")[1] and "Share" in gpu.split("\n")[1]
    assert "merged from 2 source tables" in r.stdout  # the note that explains it
    api = r.stdout[r.stdout.index("API calls"):]
    assert "Time(%)" in api.split("\n")[1]  # a table of one source keeps it


def test_terminal_metrics_table_capped(cli, tmp_path):
    path = tmp_path / "raw.log"
    path.write_text(page(300))
    r = cli("parse", str(path), "--width", "200")
    assert r.returncode == 0
    assert "500 more metric row(s) not shown (--all shows them; --json and --csv hold every one)" in r.stdout
    assert r.stdout.count("launch__func_cache_config") == 200
    r = cli("parse", str(path), "--width", "200", "--all")
    assert r.stdout.count("launch__func_cache_config") == 300 and "more metric row" not in r.stdout
