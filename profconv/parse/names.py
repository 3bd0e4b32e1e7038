"""Readable short names for kernels: the report tables people paste fold C++ signatures."""

from __future__ import annotations

import functools
import re

_RETURN_TYPE = re.compile(r"^(?:void|int|float|double)\s+(?=[A-Za-z_])")


def _fold(name: str, open_ch: str, close_ch: str, replacement: str) -> str:
    out: list[str] = []
    depth = 0
    for i, ch in enumerate(name):
        if ch == open_ch and not (open_ch == "<" and name[i + 1 : i + 2] in ("<", "=")):
            if depth == 0:
                out.append(replacement)
            depth += 1
        elif ch == close_ch and depth > 0 and not (close_ch == ">" and name[i - 1 : i] == "-"):
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


_LAUNCH_SUFFIX = re.compile(r" \[(?:grid [\dx]+(?:, )?)?(?:block [\dx]+)?\]$")


@functools.lru_cache(maxsize=1 << 14)  # a sweep's windows name the same kernels: each folded once
def short_name(name: str) -> str:
    """'void ns::k<float, 8>(float*, int)' -> 'ns::k<…>'; API and memcpy names are unchanged; a
    launch configuration nsys split the kernel's rows by stays: 'k [grid 90x1x1, block 16x16x1]'; a
    name nsys cut inside its argument list loses it as a whole one does: 'k(const float *, …' -> 'k'."""
    if name.endswith("]") and (m := _LAUNCH_SUFFIX.search(name)) and m.end() - m.start() > 3:
        return short_name(name[: m.start()]) + m.group(0)
    n = name.strip()
    if not n or n.startswith("[") or " " not in n and "<" not in n and "(" not in n:
        return n
    n = strip_correlation(n)
    n = _RETURN_TYPE.sub("", n)
    cut = n.endswith(("…", "...")) and "(" in n  # nsys cut a long name in its argument list ('k(const float *, …')
    if "<" in n:
        n = _fold(n, "<", ">", "<…>")
    if (n.endswith(")") or cut) and "(" in n:
        head = n[: n.index("(")]
        if head and (head[-1].isalnum() or head[-1] in "_>…"):
            n = head
    return n.replace("<…><…>", "<…>").strip()


_API_LAUNCH = re.compile(r"^(\w+) \(.*\[\d+\]\)$")


def strip_correlation(name: str) -> str:
    """nvprof trace names carry the correlation id: 'kernel(int) [128]' -> 'kernel(int)'; an API
    trace names the kernel a launch call started, with its id: 'cudaLaunch (k(int) [128])' ->
    'cudaLaunch' (the API call, as nvprof's own summary counts it)."""
    if name.endswith("])"):
        m = _API_LAUNCH.match(name)
        return m.group(1) if m else name
    if not name.endswith("]"):
        return name
    i = name.rfind("[")
    if i > 0 and name[i + 1 : -1].isdigit():
        return name[:i].rstrip()
    return name


def brackets_open(name: str) -> bool:
    """True while a wrapped name has unclosed (, < or [ : the next line continues it."""
    depth = 0
    for i, ch in enumerate(name):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "<" and name[i + 1 : i + 2] not in ("<", "="):
            depth += 1
        elif ch == ">" and name[i - 1 : i] != "-":
            depth -= 1
    return depth > 0
