"""The SASS of a run's kernels, for `profconv explain`: the source a run compiled (its file and the
-D defines the run recorded in its provenance) compiled again with `nvcc -cubin` for the run's GPU
and listed with `cuobjdump -sass`. NVRTC (what the run used) and nvcc hand the same PTX to the same
ptxas, so the listing is the kernel that ran; ptxas's --resource-usage gives registers and spills.

Pure helpers (which compiled module is a variant's on a layer, the command lines, ptxas's report)
are tested anywhere; `dump` is the one place the two tools run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from profconv.errors import ProfilerUnavailable

TOOL_TIMEOUT_S = 120.0
_SHAPE_KEYS = ("M", "C", "H", "W", "K", "P")


def defines_of(options: list[str]) -> dict[str, str]:
    """-DNAME=VALUE options as {NAME: VALUE} (a bare -DNAME is '1')."""
    out = {}
    for opt in options:
        if opt.startswith("-D"):
            name, _, value = opt[2:].partition("=")
            out[name] = value or "1"
    return out


def _agrees(defines: dict[str, str], facts: dict[str, object]) -> int | None:
    """How many of `facts` the module's defines match; None when one contradicts them."""
    hits = 0
    for key, value in facts.items():
        if key in defines:
            if defines[key] != str(value):
                return None
            hits += 1
    return hits


def pick_modules(compiled: list[dict], sources: list[str], dims: dict[str, int], params: dict) -> list[dict]:
    """The compiled modules of a variant on one layer: a file of the variant's `sources` whose -D
    defines agree with the layer's dimensions and the configuration its sweep chose (`params`). Of
    several that agree, those matching the most facts (a sweep compiles many candidates; the chosen
    one matches every parameter), then the fewest other defines; one module per distinct option list."""
    facts: dict[str, object] = {k: dims[k] for k in _SHAPE_KEYS if k in dims}
    facts.update({k: v for k, v in params.items() if isinstance(v, int | str) and not isinstance(v, bool)
                  and k not in ("design", "swept", "planned", "smem")})
    scored: list[tuple[tuple[int, int], dict]] = []
    for mod in compiled:
        if Path(mod.get("file", "")).name not in sources:
            continue
        defines = defines_of(mod.get("options", []))
        agree = _agrees(defines, facts)
        if agree is not None:  # ties: the fewest defines beyond the facts (a fused layer's POOL, ACT)
            scored.append(((agree, -len(defines.keys() - facts.keys())), mod))
    if not scored:
        return []
    best = max(h for h, _ in scored)
    seen, out = set(), []
    for score, mod in scored:
        key = (mod["file"], tuple(mod.get("options", [])))
        if score == best and key not in seen:
            seen.add(key)
            out.append(mod)
    return out


_PRAGMA_UNROLL = re.compile(r"(#\s*pragma\s+unroll\s+)([A-Za-z_]\w*)")


def expand_pragmas(source: str, defines: dict[str, str]) -> str:
    """`#pragma unroll NAME` with NAME a -D define: its value written in. NVRTC expands the macro in
    the pragma, nvcc does not ('identifier "CUNROLL" is undefined'), so the listing needs it done."""
    return _PRAGMA_UNROLL.sub(lambda m: m.group(1) + defines.get(m.group(2), m.group(2)), source)


def arch_of(compute_capability: str | None) -> str | None:
    """'9.0' -> 'sm_90'."""
    if not compute_capability or not re.fullmatch(r"\d+\.\d+", compute_capability):
        return None
    major, minor = compute_capability.split(".")
    return f"sm_{major}{minor}"


def nvcc_cubin_argv(nvcc: str, source: Path, out: Path, arch: str, options: list[str]) -> list[str]:
    """nvcc -cubin with the run's defines and language standard (NVRTC-only options left out)."""
    keep = [o for o in options if o.startswith(("-D", "-std", "-I", "--use_fast_math", "-use_fast_math"))]
    return [nvcc, "-cubin", f"-arch={arch}", "--resource-usage", *keep, "-o", str(out), str(source)]


_FUNC = re.compile(r"Compiling entry function '([^']+)'")
_REGS = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def resource_usage(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """ptxas --resource-usage: registers and spill bytes (stores + loads) per entry function."""
    regs: dict[str, int] = {}
    spills: dict[str, int] = {}
    func = None
    for line in text.splitlines():
        if m := _FUNC.search(line):
            func = m.group(1)
        elif func and (m := _SPILL.search(line)):
            spills[func] = int(m.group(1)) + int(m.group(2))
        elif func and (m := _REGS.search(line)):
            regs[func] = int(m.group(1))
    return regs, spills


_ENCODING = re.compile(r"\s*/\* 0x[0-9a-f]{16} \*/\s*$")


def compact(sass: str) -> str:
    """cuobjdump's listing without the instruction encodings (a third of its size): each instruction
    keeps its address and text, the lines holding only an encoding go."""
    out = []
    for line in sass.splitlines():
        stripped = _ENCODING.sub("", line)
        if stripped.strip() or not line.strip():
            out.append(stripped.rstrip())
    return "\n".join(out) + "\n"


def functions_in(sass: str) -> list[str]:
    return re.findall(r"^\s*Function : (\S+)", sass, flags=re.M)


def find_tool(name: str) -> str:
    """nvcc/cuobjdump on PATH, in CUDA_HOME or /usr/local/cuda, or from the pip wheel (nvidia/cu13/bin)."""
    import os

    found = shutil.which(name)
    if found:
        return found
    dirs = [Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin", Path("/usr/local/cuda/bin")]
    for site in map(Path, sys.path):
        dirs += sorted(site.glob("nvidia/cu*/bin")) + [site / "nvidia/cuda_cuobjdump/bin"]
    for d in dirs:
        if (d / name).is_file() and os.access(d / name, os.X_OK):
            return str(d / name)
    raise ProfilerUnavailable(f"{name} is not installed or not on PATH (needed for the SASS listing; "
                              "pip install nvidia-cuda-cuobjdump gives cuobjdump)")


@dataclass(frozen=True)
class Listing:
    sass: str
    kernels: list[str]
    registers: dict[str, int]
    spill_bytes: dict[str, int]
    how: str
    half_ops: dict[str, dict[str, int]] = field(default_factory=dict)  # PTX: kernel -> {f16, f16x2, ...} counts


def dump(source_text: str, name: str, options: list[str], arch: str, workdir: Path) -> Listing:
    """Compile `source_text` (headers already expanded) with nvcc -cubin for `arch` and list its SASS."""
    from profconv.errors import ProfilerFailed

    nvcc, cuobjdump = find_tool("nvcc"), find_tool("cuobjdump")
    workdir.mkdir(parents=True, exist_ok=True)
    src, cubin = workdir / name, workdir / (Path(name).stem + ".cubin")
    src.write_text(expand_pragmas(source_text, defines_of(options)))
    argv = nvcc_cubin_argv(nvcc, src, cubin, arch, options)
    built = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    if built.returncode != 0:
        first = next((ln for ln in built.stderr.splitlines() if "error" in ln), built.stderr.strip()[:200])
        raise ProfilerFailed(f"nvcc -cubin {name} failed: {first}")
    listed = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    if listed.returncode != 0:
        raise ProfilerFailed(f"cuobjdump -sass {cubin.name} failed: {listed.stderr.strip()[:200]}")
    regs, spills = resource_usage(built.stderr + built.stdout)
    how = f"nvcc -cubin -arch={arch} {' '.join(argv[4:-3])} | cuobjdump -sass"
    return Listing(compact(listed.stdout), functions_in(listed.stdout), regs, spills, how)


def dump_library(path: Path) -> Listing:
    """The SASS of a built library or executable (a user's host or course kernel), with cuobjdump's
    resource usage per function (registers, stack, shared)."""
    from profconv.errors import ProfilerFailed

    cuobjdump = find_tool("cuobjdump")
    listed = subprocess.run([cuobjdump, "-res-usage", "-sass", str(path)], capture_output=True, text=True,
                            timeout=TOOL_TIMEOUT_S, errors="replace")
    if listed.returncode != 0:
        raise ProfilerFailed(f"cuobjdump -sass {path.name} failed: {listed.stderr.strip()[:200]}")
    regs = {m.group(1): int(m.group(2)) for m in re.finditer(r"Function (\S+):\s*\n\s*REG:(\d+)", listed.stdout)}
    ptx = subprocess.run([cuobjdump, "-ptx", str(path)], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                         errors="replace")  # PTX tells a scalar __half from a packed __half2 (SASS cannot)
    from profconv.analysis.sass import ptx_half_ops

    half = {k: v for k, v in ptx_half_ops(ptx.stdout if ptx.returncode == 0 else "").items() if v}
    return Listing(compact(listed.stdout), functions_in(listed.stdout), regs, {},
                   f"cuobjdump -res-usage -sass {path.name}", half)
