"""`profconv grade --build-only`: a class's nvcc builds made into the cache on the CPU, no GPU, no job run.

nvcc here is a stand-in on PATH (it writes the library it is asked for, and fails on a file that holds
`SYNTAX_ERROR`): what is checked is the command -- which kernels are built, counted, found in the cache on
the next run, and how a failure and a missing architecture are told -- not the compiler."""

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

FAKE_NVCC = """#!/bin/sh
echo "$@" >> "{log}"
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
for a in "$@"; do
  case "$a" in *.cu) grep -q SYNTAX_ERROR "$a" 2>/dev/null && {{ echo "$a(3): error: expected a ';'" >&2; exit 2; }} ;; esac
done
printf 'ELF' > "$out"
"""


@pytest.fixture
def klass(tmp_path: Path, monkeypatch) -> Path:
    """Three submissions: two course files (one that does not compile) and a device kernel (NVRTC: no build)."""
    root = tmp_path / "class"
    shutil.copytree(EXAMPLES / "course-minidnn", root / "alice")
    shutil.copytree(EXAMPLES / "course-minidnn", root / "bob")
    cu = next((root / "bob").glob("*.cu"))
    cu.write_text(cu.read_text() + "\nSYNTAX_ERROR\n")
    shutil.copytree(EXAMPLES / "device-tiled", root / "carol")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvcc").write_text(FAKE_NVCC.format(log=tmp_path / "nvcc.log"))
    (bin_dir / "nvcc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("PROFCONV_CACHE", str(tmp_path / "cache"))
    return root


def test_build_only_compiles_each_course_file_once_then_finds_it_cached(klass: Path, tmp_path: Path) -> None:
    args = ("grade", str(klass), "-m", "ece408-fa20", "--out", str(tmp_path / "g"), "--build-only", "--arch", "sm_90")
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    assert "2 kernel build(s) for sm_90" in first.stdout
    assert "1 compiled, 0 already in the cache, 1 failed" in first.stdout
    assert "bob" in first.stdout and "error: expected a ';'" in first.stdout
    assert len((tmp_path / "nvcc.log").read_text().splitlines()) == 2
    assert not (tmp_path / "g").exists()  # nothing graded, no grade directory
    again = run_cli(*args, "--json")
    got = json.loads(again.stdout)
    assert (got["built"], got["cached"], got["failed"], got["arch"]) == (0, 1, 1, "sm_90")
    by_name = {Path(b["submission"]).name: b for b in got["builds"]}
    assert by_name["alice"]["cached"] is True and by_name["bob"]["error"].endswith("error: expected a ';'")
    assert set(by_name) == {"alice", "bob"}  # carol's device kernel needs no nvcc
    assert len((tmp_path / "nvcc.log").read_text().splitlines()) == 3  # only the failed one tried again
    assert Path(by_name["alice"]["where"]).parent == tmp_path / "cache" / "builds"


def test_build_only_says_what_is_missing(klass: Path, tmp_path: Path, monkeypatch) -> None:
    from profconv.run.user import build
    bad = run_cli("grade", str(klass), "--out", str(tmp_path / "g"), "--build-only", "--arch", "sm90")
    assert bad.returncode == 2 and "--arch takes a GPU architecture such as sm_90" in bad.stderr
    no_gpu = run_cli("grade", str(klass), "--out", str(tmp_path / "g"), "--build-only")  # no nvidia-smi on this PATH
    assert no_gpu.returncode == 3 and "give it, e.g. --arch sm_90" in no_gpu.stderr
    (tmp_path / "bin" / "nvcc").unlink()

    def no_nvcc_anywhere() -> str:  # this machine may have one in /usr/local/cuda, where find_nvcc looks too
        raise build.NvccMissing("host and course kernels are compiled with nvcc, which is not on PATH")

    monkeypatch.setattr(build, "find_nvcc", no_nvcc_anywhere)
    no_nvcc = run_cli("grade", str(klass), "--out", str(tmp_path / "g"), "--build-only", "--arch", "sm_90")
    assert no_nvcc.returncode != 0 and "nvcc, which is not on PATH" in no_nvcc.stderr
    assert len(no_nvcc.stderr.strip().splitlines()) == 1
