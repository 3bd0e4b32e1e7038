"""Which ECE 408 form a course file is in, read from its source (pure; never from the file's name).

The course changed its interface over the years; profconv calls each form exactly as the course's
program did (contracts.py, build.py). A registry of small readers, tried in order; the first that
recognises the source names the form, the text that decided it, and the terms that used it:

  mxnet            `template<> void forward<gpu, float>(y, x, w)` in new-forward.cuh (2017-2019)
  mxnet-generic    `template<typename gpu, typename DType> void forward(y, x, w)` alone (Fall 2017)
  minidnn          GPUInterface prolog / conv_forward_gpu / epilog, 6 sizes (Fall 2020 on)
  minidnn-stride   the same with a trailing stride S (later terms; m3-forward.cu in req_N/ op_N/)
  minidnn-single   conv_forward_gpu alone, on host pointers (the first Fall 2020 form)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

COURSE_FORMS = ("mxnet", "mxnet-generic", "minidnn", "minidnn-stride", "minidnn-single")
ERAS = {
    "mxnet": "MXNet new-forward.cuh, Fall 2017 to Fall 2019",
    "mxnet-generic": "MXNet new-forward.cuh, generic forward template (Fall 2017)",
    "minidnn": "mini-dnn new-forward.cu, Fall 2020 on",
    "minidnn-stride": "mini-dnn with stride S (new-forward.cu or m3-forward.cu), later terms",
    "minidnn-single": "mini-dnn, conv_forward_gpu alone on host pointers (first Fall 2020 form)",
}
FOLDER = re.compile(r"^(req_\d+|op_\d+|m[1-4]|milestone[1-4])$", re.I)


@dataclass(frozen=True)
class Form:
    form: str | None  # one of COURSE_FORMS, or None: not a course file
    evidence: str = ""  # the declaration that decided it, whitespace collapsed
    error: str | None = None  # a course file profconv cannot call (and why)

    @property
    def era(self) -> str | None:
        return ERAS.get(self.form or "")


def strip_comments(text: str) -> str:
    """C/C++ source without // and /* */ comments (string literals are not special-cased: enough for signatures)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _one_line(text: str, limit: int = 160) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def params_of(params: str) -> list[str]:
    """A parameter list split at its top-level commas (templates such as Tensor<gpu, 4, float> kept whole)."""
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [p.strip() for p in out if p.strip()]


METHOD = r"GPUInterface\s*::\s*{name}\s*\(([^)]*)\)"


def _minidnn(code: str) -> Form | None:
    m = re.search(METHOD.format(name="conv_forward_gpu"), code)
    if not m:
        return None
    n = len(params_of(m.group(1)))
    evidence = _one_line(m.group(0))
    has_prolog = re.search(METHOD.format(name="conv_forward_gpu_prolog"), code) is not None
    if n == 9 and not has_prolog:
        return Form("minidnn-single", evidence)
    if n in (9, 10):
        return Form("minidnn" if n == 9 else "minidnn-stride", evidence)
    return Form(None, evidence, f"GPUInterface::conv_forward_gpu takes {n} parameters; the course's take 9 "
                                "(y, x, k, B, M, C, H, W, K) or 10 (with a trailing stride S)")


SPECIALISED = re.compile(r"template\s*<\s*>\s*(?:inline\s+)?void\s+forward\s*<\s*(?:mshadow\s*::\s*)?gpu\s*,\s*float\s*>"
                         r"\s*\(")
GENERIC = re.compile(r"template\s*<\s*(?:typename|class)\s+(\w+)\s*,\s*(?:typename|class)\s+(\w+)\s*>\s*"
                     r"(?:inline\s+|static\s+)*void\s+forward\s*\(([^)]*)\)\s*\{")


def _mxnet(code: str) -> Form | None:
    spec = SPECIALISED.search(code)
    if spec:
        end = code.find(")", spec.end())
        return Form("mxnet", _one_line(code[spec.start():end + 1]))
    gen = GENERIC.search(code)
    if gen and "Tensor" in gen.group(3):
        return Form("mxnet-generic", _one_line(gen.group(0).rstrip("{")))
    if re.search(r"forward\s*<\s*(?:mshadow\s*::\s*)?gpu\s*,\s*float\s*>", code):  # declared some other way
        m = re.search(r"[^\n;{}]*forward\s*<\s*(?:mshadow\s*::\s*)?gpu\s*,\s*float\s*>[^\n{;]*", code)
        return Form("mxnet", _one_line(m.group(0) if m else "forward<gpu, float>"))
    return None


READERS: tuple[Callable[[str], Form | None], ...] = (_minidnn, _mxnet)


def detect(text: str) -> Form:
    """The course form of a source text, or Form(None) when it is not a course file (comments ignored)."""
    code = strip_comments(text)
    for reader in READERS:
        found = reader(code)
        if found is not None:
            return found
    return Form(None)


def course_folder(path: PurePath) -> str | None:
    """The course's per-optimisation folder a file sits in ('req_1', 'op_2', 'm3'), if any (a fact, not a
    form: the same form is in every folder)."""
    for part in reversed(path.parent.parts[-3:]):
        if FOLDER.match(part):
            return part
    return None
