"""normalize with long runs of blank lines folded while it rewrites the text (profconv.parse.text:
_folded, _unfolded): the same text as rewriting it whole, on every test log with long blank runs
put among its lines and on random texts made of the lines each rewrite acts on."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from profconv.parse import text

DATA = Path(__file__).parent / "data"


def _whole(t: str) -> str:
    """normalize without folding."""
    return text._rewritten([text._line_ends(t)])


@pytest.fixture
def folds(monkeypatch):
    """Runs of 8 newlines and more folded to 3 (short texts take the folded path); how many times
    the folded text was rewritten and put back."""
    monkeypatch.setattr(text, "FOLD_FROM", 8)
    monkeypatch.setattr(text, "FOLD_KEEP", 3)
    calls = {"unfolded": 0}
    real = text._unfolded

    def counted(*args):
        got = real(*args)
        calls["unfolded"] += got is not None
        return got

    monkeypatch.setattr(text, "_unfolded", counted)
    return calls


def _with_runs(lines: list[str], rng: random.Random) -> str:
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(out))
        out[at:at] = [""] * rng.choice([8, 9, 20, 300]) + ([" " * rng.randint(1, 3)] if rng.random() < 0.3 else [])
    return "\n".join(out) + rng.choice(["", "\n", "\n" * 12])


def test_test_logs_with_blank_runs_normalize_as_whole(folds):
    rng = random.Random(4)
    files = [p for p in sorted(DATA.rglob("*")) if p.is_file() and p.stat().st_size < 400_000]
    checked = 0
    for p in files:
        try:
            raw = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        t = _with_runs(raw.split("\n"), rng)
        assert text.normalize(t) == _whole(t), p
        checked += 1
    assert checked > 250
    assert folds["unfolded"] > 250  # (a <pre> page is rewritten whole)


LINES = ["# comment", "## heading", "> quoted", ">> deeper", "// code comment", "-- dashes", "--", "#x", "prose line",
         "    indented four", "\tindented tab", "  two spaces", "", "", "", "   ", "trailing  ", "x <br>", "<br>",
         "47.10\\% of it", "/* opened", " * a star line", " */", "==12== marker", "--12-- marker", "\u201412\u2014 m",
         "25\u2019056 ns", "<b>bold</b> x", "**bold**", "&amp; sign", "  1.0ms  2.0us  k<float>(x) [3]", "k>",
         "[...]", "Done."]


@pytest.mark.parametrize("seed", range(6))
def test_random_texts_normalize_as_whole(seed, folds):
    """Texts of the lines each rewrite acts on (comment prefixes on neighbouring lines, markdown code
    blocks after blank lines, C comment blocks, line-break tags, escaped percent signs, PID dashes,
    blank-only lines next to the runs) with runs of blank lines: folded or not, the same."""
    rng = random.Random(seed)
    for _ in range(400):
        lines = [rng.choice(LINES) for _ in range(rng.randint(1, 25))]
        t = _with_runs(lines, rng)
        if rng.random() < 0.2:
            t = t.replace("\n", "\r\n")
        assert text.normalize(t) == _whole(t), repr(t)
    assert folds["unfolded"] > 350


def test_a_pre_block_is_rewritten_whole(folds):
    t = "<pre>\n" + "\n" * 20 + "==1== x &amp; y\n</pre>\n"
    assert text.normalize(t) == _whole(t) == "\n" * 21 + "==1== x & y\n\n"
    assert folds["unfolded"] == 0


def test_runs_come_back_where_they_were():
    """Comment prefixes off, a markdown code block after the blank lines dedented, the blank lines
    back where they were."""
    t = "# a\n# b\n" + "\n" * 1000 + "    code  \n" + "\n" * 300 + "x"
    got = text.normalize(t)
    assert got == "a\nb\n" + "\n" * 1000 + "code\n" + "\n" * 300 + "x"
    assert got.split("\n")[1002] == "code"
