"""Hostile inputs for the bounded fuzz run (`nox -s fuzz`, scripts/fuzz.py) and its small in-suite slice
(tests/test_fuzz_hostile.py): each input is made from (class, seed) alone, so a finding is replayed with
`python scripts/fuzz.py --replay CLASS:SEED`.

Classes and what each checks (beyond "nothing but profconv's own error escapes"):
  log       a real log mutated (tokens, cuts, duplicates, glued lines, stray program output inside a
            table, long rows, digit runs): the parser's invariants (tests/parse_invariants.check_all);
  stray     one program-output line inserted inside a log: no row lost without a word (rows plus lines
            listed as unplaced never fewer than the clean log's rows);
  notebook  a log inside a Jupyter notebook with hostile JSON (surrogate escapes, odd outputs, nesting);
  record    a run or bench record with one field replaced by a hostile value: report --json (strict JSON),
            markdown (no raw HTML from the record), HTML, and a compare against the original;
  manifest  a kernel folder whose profconv.toml is hostile (types, typos, sources outside, bytes, depth);
  listing   a grade listing (CSV or TOML) with quotes, commas, comments and odd names: every student line
            becomes a submission, or the listing is refused naming a line.
"""

from __future__ import annotations

import io
import json
import random
import re
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
LOG_SEEDS = [
    "seeds/002_b0bcac5cefbf4480.log", "nsys-text/ayush-os-a100-vectoradd-stats.log",
    "nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log", "ncu-text/md-info-fused-rmsnorm-t4-colab.log",
    "acc-time/denismihailapov-lab2-heat-n128-multifunc.log", "nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log",
    "nsys-csv/littlelittlecloud-dotllm-kern-sum-rtx4090-win.log", "nvprof-um/nanzifan-rodinia-bfs-um-thrashes.log",
    "ncu-csv/andrewxu22-rodinia-cfd-v100-ncu2020.csv.log", "nvprof-new/nikikanaparthi-tiled-matmul.log",
    "nvprof-new/samhachem99-vector-add-streams.log",
]
RECORD_SEEDS = ["runs/ece408-h200.json", "runs/user-kernels-h200.json", "runs/user-kernels-profiled-h100.json",
                "bench/bench-h200-first.json"]
STRAY = ["Done.", "Warning: device 0 throttled", "rank 3: iteration 10", "==PROF== Disconnected from process 1",
         "Op Time: 12.5 ms", "checking results... PASSED"]
TOKENS = ["nan", "inf", "-5", "1e400", "2_0", "99999999999999999999", "1,5", "1.234.567,8", "<b>", "</b>", "\f",
          "\x85", "\u2028", "\ufeff", "\r", "  ", "%", "ms", "==12==", "—12—", "//", "# ", "...", "", "\ud800",
          "0.00001 ms", "卷积", "\u202e", "\x00"]
# what a program prints among a profiler's tables (not a profiler's own line: `==PROF== Disconnected` ends an
# ncu process, and rows after it may rightly be another profile's)
PROGRAM_OUTPUT = [s for s in STRAY if not s.startswith("==")]
HOSTILE_VALUES: list[object] = [None, -1, 0, 1e308, 5e-324, 2**63, 2**64 + 1, "", "<script>alert(1)</script>",
                                "`x`", "**b**", "a|b", "\ud800", "../../etc/passwd", "/etc/passwd", [], {}, [1, "a"],
                                {"a": {"b": [None]}}, True, "NaN", 10**30, "x" * 5000, "卷积_核"]
_text_cache: dict[str, str] = {}


def _seed_text(rel: str) -> str:
    if rel not in _text_cache:
        _text_cache[rel] = (DATA / rel).read_text(encoding="utf-8")
    return _text_cache[rel]


class Finding(Exception):
    """A broken promise: a row lost without a word, raw HTML in markdown, non-strict JSON, a student dropped."""


# --- logs ------------------------------------------------------------------------------------------------
def mutate_log(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 6)):
        op = rng.choice(["token", "cut", "dup", "glue", "drop", "digit", "stray", "long", "digits"])
        k = rng.randrange(max(len(lines), 1))
        line = lines[k] if lines else ""
        if op == "token" and line:
            at = rng.randint(0, len(line))
            lines[k] = line[:at] + rng.choice(TOKENS) + line[at:]
        elif op == "cut" and line:
            lines[k] = line[: rng.randint(0, len(line))]
        elif op == "dup":
            lines.insert(k, line)
        elif op == "glue" and k + 1 < len(lines):
            lines[k : k + 2] = [lines[k] + lines[k + 1]]
        elif op == "drop" and len(lines) > 1:
            del lines[k]
        elif op == "digit" and any(c.isdigit() for c in line):
            at = rng.choice([i for i, c in enumerate(line) if c.isdigit()])
            lines[k] = line[:at] + rng.choice("0123456789-_.,e") + line[at + 1 :]
        elif op == "stray":
            lines.insert(k, rng.choice(STRAY))
        elif op == "long":
            lines[k] = line + rng.choice([" 1ms", " 1", " 1 2,5", ",1"]) * rng.randint(100, 5000)
        elif op == "digits" and any(c.isdigit() for c in line):
            at = rng.choice([i for i, c in enumerate(line) if c.isdigit()])
            lines[k] = line[:at] + "9" * rng.choice([20, 400, 5000]) + line[at + 1 :]
    return "\n".join(lines)


def _parse(text: str):
    import profconv
    from profconv.errors import ProfconvError

    try:
        return profconv.parse_text(text)
    except ProfconvError:
        return None


INVARIANTS_EVERY = 20  # the full invariants (pandas, ~0.1 s an input) on one log input in 20


def check_log(seed: int) -> str:
    """Every input: parsed or refused in one line, its --json strict and writable; one in INVARIANTS_EVERY
    also every invariant of tests/parse_invariants (numbers from the text, totals, shares)."""
    rng = random.Random(seed)
    text = mutate_log(rng, _seed_text(rng.choice(LOG_SEEDS)))
    ps = _parse(text)
    if ps is None:
        return "refused"
    _strict_json(ps)
    if seed % INVARIANTS_EVERY == 0:
        from tests.parse_invariants import check_all

        check_all(ps, text)
        return "parsed, invariants"
    return "parsed"


def _strict_json(ps) -> None:
    from profconv.render.parse_output import write_json

    out = io.StringIO()
    write_json([ps], out)
    json.loads(out.getvalue(), parse_constant=_refuse)
    out.getvalue().encode("utf-8")  # every string writable (no lone surrogate)


def _row_count(ps) -> int:
    return 0 if ps is None else len(ps.rows)


_clean_rows: dict[str, tuple[int, int]] = {}


def check_stray(seed: int) -> str:
    """One stray line inside the text: rows + unplaced lines never fewer than the clean log's rows."""
    rng = random.Random(seed)
    rel = rng.choice(LOG_SEEDS)
    text = _seed_text(rel)
    if rel not in _clean_rows:
        clean = _parse(text)
        _clean_rows[rel] = (_row_count(clean), len(clean.unplaced) if clean is not None else 0)
    before, unplaced_before = _clean_rows[rel]
    lines = text.split("\n")
    k = rng.randrange(1, max(len(lines), 2))
    lines.insert(k, rng.choice(PROGRAM_OUTPUT))
    ps = _parse("\n".join(lines))
    after = _row_count(ps)
    said = (len(ps.unplaced) - unplaced_before) if ps is not None else 0
    if after + max(said, 0) < before:
        raise Finding(f"{rel}: a stray line at line {k + 1} lost {before - after} row(s) and listed {said} "
                      "line(s) as unplaced")
    return "kept"


# --- notebooks ---------------------------------------------------------------------------------------------
def check_notebook(seed: int) -> str:
    rng = random.Random(seed)
    log = _seed_text(rng.choice(LOG_SEEDS))
    text_field: object = log.splitlines(keepends=True)
    kind = rng.choice(["plain", "surrogate", "outputs-odd", "deep", "data", "cells-odd"])
    if kind == "surrogate":
        pieces = list(text_field)  # type: ignore[arg-type]
        pieces[rng.randrange(len(pieces))] += rng.choice(["\ud800", "\udfff", "\ud83d"])
        text_field = pieces
    outputs: object = [{"output_type": "stream", "name": "stdout", "text": text_field}]
    if kind == "outputs-odd":
        outputs = rng.choice([5, "x", None, {"a": 1}, [5, None, "s"], [{"output_type": "stream", "text": 5}]])
    elif kind == "data":
        outputs = [{"output_type": "execute_result", "data": {"text/plain": text_field}}]
    cells: object = [{"cell_type": "code", "source": [], "outputs": outputs}]
    if kind == "cells-odd":
        cells = rng.choice([[1, None, "x"], {"a": 1}, [{"cell_type": "markdown", "source": 7}]])
    nb = json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {}})
    if kind == "deep":
        depth = rng.choice([100, 2000, 50_000])
        nb = nb.replace('"metadata": {}', '"metadata": ' + "[" * depth + "]" * depth)
    ps = _parse(nb)
    if ps is not None:
        _strict_json(ps)
    return "parsed" if ps is not None else "refused"


def _refuse(token: str):
    raise Finding(f"non-strict JSON token {token}")


# --- records -----------------------------------------------------------------------------------------------
def _paths(doc, prefix=()):
    """Every (path) of a JSON document: keys and indices, containers included."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:4]):
            yield from _paths(v, (*prefix, i))


def _set(doc, path, value):
    for p in path[:-1]:
        doc = doc[p]
    doc[path[-1]] = value


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


SAME_TYPE: dict[type, list[object]] = {
    str: ["", "<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "\ud800", "../../x.csv", "/etc/passwd",
          "x" * 3000, "卷积_核", "a|b`c`**d**", "nan"],
    int: [0, 1, 2**63 - 1, 10**12, 7],
    float: [0.0, 5e-324, 1e308, 1e-300, 3.5],
    list: [[]],
    dict: [{}],
    bool: [True, False],
}


def _hostile_like(rng: random.Random, value: object) -> object:
    """Mostly a value of the same JSON type (the record stays valid, so the report is reached), else anything."""
    if rng.random() < 0.75 and type(value) in SAME_TYPE:
        if isinstance(value, list) and value and rng.random() < 0.5:
            return value + value  # an element listed twice
        return rng.choice(SAME_TYPE[type(value)])
    return rng.choice(HOSTILE_VALUES)


def check_record(seed: int) -> str:
    rng = random.Random(seed)
    rel = rng.choice(RECORD_SEEDS)
    base = json.loads(_seed_text(rel))
    doc = json.loads(_seed_text(rel))
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(doc) if p and p[0] not in ("schema", "schema_version")]
        path = rng.choice(paths)
        _set(doc, path, _hostile_like(rng, _get(doc, path)))
    work = Path(tempfile.mkdtemp(prefix="profconv-fuzz-"))
    try:
        (work / "a").mkdir()
        (work / "b").mkdir()
        name = "bench.json" if "bench" in rel else "run.json"
        try:
            (work / "b" / name).write_text(json.dumps(doc, allow_nan=False))
        except (ValueError, UnicodeEncodeError):
            (work / "b" / name).write_text(json.dumps(doc).encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
        (work / "a" / name).write_text(json.dumps(base))
        return _report_all(work, name, plots=seed % 10 == 0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _report_all(work: Path, name: str, plots: bool = True) -> str:
    from profconv.errors import ProfconvError
    from profconv.render import data, html, markdown
    from profconv.render.document import RenderOptions
    from profconv.report import compare as compare_mod
    from profconv.report.build import ReportOptions, build
    from profconv.report.inputs import load

    try:
        inputs = load([str(work / "b" / name)])
    except ProfconvError:
        return "refused"
    doc = build(inputs, ReportOptions(plots_dir=work / "plots" if plots else None))
    json.loads(data.render(doc), parse_constant=_refuse)
    md = markdown.render(doc, RenderOptions(full=True))
    outside_code = re.sub(r"(`+).+?\1", "", md, flags=re.S).lower()  # a code span shows markup as text
    if "<script" in outside_code or "<img" in outside_code:
        raise Finding("raw HTML from the record in the markdown report (outside a code span)")
    page = html.render(doc, RenderOptions(full=True))
    if page.lower().count("<script") > 1:  # profconv's own sorter is the one script
        raise Finding("a script from the record in the HTML report")
    try:
        both = load([str(work / "a" / name), str(work / "b" / name)])
        df = compare_mod.compare(both[0], both[1], 0.05)
        markdown.render(compare_mod.document(df, "a", "b", 0.05), RenderOptions())
    except ProfconvError:
        pass
    return "reported"


# --- manifests ---------------------------------------------------------------------------------------------
MANIFEST_KEYS = ["name", "contract", "source", "function", "args", "grid", "block", "shared_bytes", "options",
                 "precision", "tolerance", "description", "defines", "sweep", "timeout", "grd", "Source", ""]
TOML_VALUES = ['"tiled"', '"device"', '"k.cu"', '"../k.cu"', '"/etc/passwd"', '"link.cu"', "5", "-1", "1e400",
               "nan", "inf", "true", '["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]', '["min()"]',
               '["M / 0"]', '["TILE", "TILE"]', "[[[[]]]]", '{ TILE = 16 }', '{ TILE = [8, 16, 0] }', '"\\ud800"',
               '"卷积"', '"<script>"', "[1, 2, 3]", '"x" ', "= =", '"""\nmulti\n"""']


def check_manifest(seed: int) -> str:
    from profconv.errors import ProfconvError
    from profconv.run.user import manifest

    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="profconv-fuzz-"))
    try:
        k = work / "k"
        k.mkdir()
        (k / "k.cu").write_text((ROOT / "examples" / "device-tiled" / "conv_tiled.cu").read_text().split("*/", 1)[1])
        (work / "k.cu").write_text("__global__ void other() {}\n")
        (k / "link.cu").symlink_to(work / "k.cu")
        src = (ROOT / "examples" / "device-tiled" / "conv_tiled.cu").read_text()
        valid = [ln for ln in manifest.header_manifest(src, ".cu").splitlines() if ln.strip()]  # loads as is
        lines = ['source = "k.cu"', *valid]
        for _ in range(rng.randint(0, 3)):  # 0: the valid manifest itself
            at = rng.randrange(len(lines) + 1)
            line = f"{rng.choice(MANIFEST_KEYS)} = {rng.choice(TOML_VALUES)}"
            if at < len(lines) and rng.random() < 0.7:
                lines[at] = line
            else:
                lines.insert(at, line)
        body = "\n".join(lines).encode("utf-8", "surrogatepass")
        if rng.random() < 0.1:
            body = body.replace(b"tiled", b"t\xe9led")  # Latin-1 bytes
        if rng.random() < 0.05:
            body = b"a = " + b"[" * 20000 + b"]" * 20000
        (k / "profconv.toml").write_bytes(body)
        try:
            d = manifest.load(k)
        except ProfconvError:
            return "refused"
        if d.source is not None and k.resolve() not in Path(d.source).resolve().parents:
            raise Finding(f"a manifest's source outside its folder was accepted: {d.source}")
        return "loaded"
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- grade listings ----------------------------------------------------------------------------------------
NAMES = ["Alice", "Bob \"the builder\"", "O'Brien", "李", "王", "a,b", "  ", "#not", "x" * 300, "<b>", "Zoë", ""]


def check_listing(seed: int) -> str:
    from profconv.errors import ProfconvError
    from profconv.grade.submissions import discover

    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="profconv-fuzz-"))
    try:
        students = []
        for i in range(rng.randint(1, 8)):
            d = work / "c" / f"s{i}"
            d.mkdir(parents=True)
            (d / "new-forward.cu").write_text(f"// {i}\n")
            students.append(f"c/s{i}")
        if rng.random() < 0.5:
            rows = ["submission,name,model"]
            for s in students:
                name = rng.choice(NAMES)
                cell = '"' + name.replace('"', '""') + '"' if rng.random() < 0.5 else name
                if rng.random() < 0.1:
                    cell = '"' + name  # an unclosed quote
                rows.append(f"{s},{cell},{rng.choice(['ece408', 'ece408;cifar10', '', 'nope'])}")
                if rng.random() < 0.1:
                    rows.append(rng.choice(["# a comment", "", "   ", "#c/s0,x"]))
            listing = work / "class.csv"
            listing.write_text("\n".join(rows) + "\n")
        else:
            rows = [f'[[submission]]\npath = "{s}"\nname = {json.dumps(rng.choice(NAMES))}' for s in students]
            if rng.random() < 0.1:
                rows.append("[[submission]]\npath = 5")
            listing = work / "class.toml"
            listing.write_text("\n\n".join(rows) + "\n")
        try:
            subs = discover([str(listing)])
        except ProfconvError:
            return "refused"
        if len(subs) != len(students):
            raise Finding(f"{len(students)} students listed, {len(subs)} submissions: a student dropped without a word")
        return "read"
    finally:
        shutil.rmtree(work, ignore_errors=True)


CLASSES = {"log": check_log, "stray": check_stray, "notebook": check_notebook, "record": check_record,
           "manifest": check_manifest, "listing": check_listing}
# inputs per class in a run of N: the parser classes dominate (they are cheap and the most varied)
WEIGHTS = {"log": 0.665, "stray": 0.15, "notebook": 0.05, "record": 0.01, "manifest": 0.065, "listing": 0.06}
