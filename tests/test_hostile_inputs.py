"""Hostile kernel manifests, kernel folders and grade listings (../shared/findings/hostile-2.md T16-T18,
S3-S5, D5, grade naming): one line and a documented exit status, nothing read or written outside the
folder it belongs to, no student dropped without a word. Inputs are built here as the reproducers were."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TILED = (EXAMPLES / "device-tiled" / "conv_tiled.cu").read_text()


def _run_kernel(cli, kernel: Path, tmp_path: Path):
    return cli("run", "-m", "ece408", "-n", "4", "--variant", "cpu", "--cpu-repeat", "1", "--kernel", kernel,
               "--out", tmp_path / "out")


def _refused(r, message: str) -> bool:
    """The kernel is refused with `message`: the run fails that kernel alone (exit 1, its FAILED line and
    its record; judge-harness's per-kernel failure), or a usage error refuses the run (exit 2)."""
    said = " ".join((r.stdout + r.stderr).split())
    return r.returncode in (1, 2) and message in said and "Traceback" not in said and "internal error" not in said


@pytest.mark.parametrize("files, message", [
    ({"profconv.toml": b'source = "k.cu"\nname = "caf\xe9"\n', "k.cu": TILED.encode()},
     "profconv.toml: not UTF-8 text (byte 27); save it as UTF-8"),
    ({"profconv.toml": b'source = "k.cu"\n', "k.cu": b"// caf\xe9\n" + TILED.encode()},
     "k.cu: not UTF-8 text (byte 6); save it as UTF-8"),
    ({"profconv.toml": b"a = " + b"[" * 100_000 + b"]" * 100_000 + b"\n"}, "profconv.toml: not valid TOML: nested too deeply"),
])
def test_manifest_bytes_and_depth_are_one_line(cli, tmp_path, files, message):
    """T16-T18: a non-UTF-8 manifest or source, a 100,000-deep TOML array: exit 2, no traceback."""
    k = tmp_path / "k"
    k.mkdir()
    for name, data in files.items():
        (k / name).write_bytes(data)
    r = _run_kernel(cli, k, tmp_path)
    assert _refused(r, message), (r.stdout, r.stderr)


@pytest.mark.parametrize("source", ["../other_students_kernel.cu", "{tmp}/other_students_kernel.cu", "link.cu"])
def test_manifest_source_outside_its_folder_is_refused(cli, tmp_path, source):
    """S3: `source` naming another folder's file (relative, absolute or through a link) is never built."""
    (tmp_path / "other_students_kernel.cu").write_text(TILED)
    k = tmp_path / "k"
    k.mkdir()
    os.symlink(tmp_path / "other_students_kernel.cu", k / "link.cu")
    (k / "profconv.toml").write_text(f'source = "{source.format(tmp=tmp_path)}"\n')
    r = _run_kernel(cli, k, tmp_path)
    assert _refused(r, "is outside the manifest's folder; name a file in that folder"), (r.stdout, r.stderr)


def test_manifest_source_inside_its_folder_still_loads(tmp_path):
    from profconv.run.user import manifest

    k = tmp_path / "k" / "src"
    k.mkdir(parents=True)
    (k / "conv_host.cu").write_text((EXAMPLES / "host-constant" / "conv_host.cu").read_text())
    (tmp_path / "k" / "profconv.toml").write_text((EXAMPLES / "host-constant" / "profconv.toml").read_text()
                                                  .replace('"conv_host.cu"', '"src/conv_host.cu"'))
    assert manifest.load(tmp_path / "k").name == "host-constant"


def test_kernel_new_force_never_writes_through_a_link(cli, tmp_path, monkeypatch):
    """S4: `kernel new --force` refuses a file that is a symbolic link; the link's target is untouched."""
    monkeypatch.chdir(tmp_path)
    assert cli("kernel", "new", "k").returncode == 0
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (tmp_path / "k" / "k.cu").unlink()
    os.symlink(precious, tmp_path / "k" / "k.cu")
    r = cli("kernel", "new", "k", "--force")
    assert r.returncode == 2 and "k/k.cu is a symbolic link" in r.stderr and "not replaced, even with --force" in r.stderr
    assert precious.read_text() == "keep me\n"
    (tmp_path / "k" / "k.cu").unlink()
    assert cli("kernel", "new", "k", "--force").returncode == 0 and not (tmp_path / "k" / "k.cu").is_symlink()


def _class(tmp_path: Path, names: list[str]) -> Path:
    for n in names:
        (tmp_path / "c" / n).mkdir(parents=True)
        (tmp_path / "c" / n / "new-forward.cu").write_text(f"// {n}\n")
    return tmp_path / "c"


def test_grade_listing_with_an_unclosed_quote_is_refused_naming_its_line(cli, tmp_path):
    """D5: `c/bob,"Bob ""the builder,ece408` used to swallow carol and dave (2 jobs of 4, exit 0)."""
    _class(tmp_path, ["alice", "bob", "carol", "dave"])
    listing = tmp_path / "class.csv"
    listing.write_text('submission,name,model\nc/alice,Alice,ece408\nc/bob,"Bob ""the builder,ece408\n'
                       "c/carol,Carol,ece408\n# a comment\nc/dave,Dave,ece408\n")
    r = cli("grade", listing, "--plan", "-m", "ece408", "--out", tmp_path / "g")
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {listing}:3: unexpected end of data (a quote opened and not closed")
    listing.write_text('submission,name,model\nc/alice,Alice,ece408\nc/bob,"Bob ""the builder""",ece408\n'
                       "c/carol,Carol,ece408\n# a comment\nc/dave,Dave,ece408\n")
    from profconv.grade.submissions import discover

    assert [s.name for s in discover([str(listing)])] == ["Alice", "Bob_the_builder", "Carol", "Dave"]


def test_grade_toml_listing_nested_too_deeply(cli, tmp_path):
    listing = tmp_path / "deep.toml"
    listing.write_text("[[submission]]\npath = \"x\"\na = " + "[" * 50_000 + "]" * 50_000 + "\n")
    r = cli("grade", listing, "--plan", "-m", "ece408", "--out", tmp_path / "g")
    assert r.returncode == 2 and "not valid TOML (nested too deeply)" in r.stderr


def test_grade_hash_does_not_follow_links_out_of_a_submission(tmp_path):
    """S5: a link to a large file elsewhere is hashed as its name (no read, no memory); files in chunks."""
    from profconv.grade.submissions import content_hash

    sub = _class(tmp_path, ["alice"]) / "alice"
    before = content_hash(sub)
    big = tmp_path / "big.bin"
    with big.open("wb") as fh:
        fh.truncate(3 << 30)  # a 3 GiB sparse file: reading it whole would need 3 GiB of memory
    os.symlink(big, sub / "data.bin")
    with_link = content_hash(sub)
    assert with_link != before  # the link is part of the submission
    os.remove(sub / "data.bin")
    os.symlink(tmp_path / "elsewhere.bin", sub / "data.bin")
    assert content_hash(sub) != with_link  # another target, another digest


def test_grade_submissions_with_non_ascii_names_stay_apart(tmp_path):
    """Grade naming: 李 and 王 were both 'submission', and the whole grade was refused."""
    from profconv.grade.submissions import discover, safe_name

    subs = discover([str(_class(tmp_path, ["李", "王"]))])
    assert len({s.name for s in subs}) == 2 and all(s.name.startswith("submission-") for s in subs)
    assert safe_name("alice") == "alice" and safe_name("Bob the builder") == "Bob_the_builder"


def test_grade_listing_gpu_cell_cannot_carry_batch_directives(cli, tmp_path):
    """hostile-2 'Slurm gres from the listing is unsanitised': a gpu cell with a newline and #SBATCH."""
    _class(tmp_path, ["alice"])
    listing = tmp_path / "class.toml"
    listing.write_text('[[submission]]\npath = "c/alice"\ngpu = "H100\\n#SBATCH --x"\n')
    r = cli("grade", listing, "--plan", "-m", "ece408", "--out", tmp_path / "g")
    assert r.returncode == 2 and "is not a GPU type" in r.stderr
    listing.write_text('[[submission]]\npath = "c/alice"\ngpu = "A100-80GB"\n')
    from profconv.grade.submissions import discover

    assert discover([str(listing)])[0].gpu == "A100-80GB"
