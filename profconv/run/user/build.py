"""Compiling a user's kernel: nvcc command lines (pure), the course's generated header, compiler messages.

Compiler output is rewritten so that every file:line names the user's own file, never a build copy.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from profconv.errors import ProfconvError
from profconv.run.user.forms import strip_comments

COURSE_METHODS = ("conv_forward_gpu_prolog", "conv_forward_gpu", "conv_forward_gpu_epilog")
NVCC_TIMEOUT_S = 300


class CompileError(ProfconvError):
    """The user's kernel did not compile; the message is the compiler's error lines (file:line)."""


class NvccMissing(ProfconvError):
    """Host and course kernels need nvcc on PATH (or in $CUDA_HOME/bin)."""


@dataclass(frozen=True)
class Library:
    path: Path  # the shared library
    argv: tuple[str, ...]  # the nvcc command that built it
    include_map: dict[str, str] = field(default_factory=dict)  # absolute include paths rewritten in the build copy


def shim_dir() -> Path:
    return Path(str(resources.files("profconv.run.user").joinpath("shim")))


def find_nvcc() -> str:
    import os

    found = shutil.which("nvcc")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and Path(home, "bin", "nvcc").is_file():
            return str(Path(home, "bin", "nvcc"))
    raise NvccMissing("host and course kernels are compiled with nvcc, which is not on PATH (nor in $CUDA_HOME/bin): "
                      "install the CUDA toolkit or use a device or python kernel")


def nvcc_argv(nvcc: str, sources: list[Path], out: Path, arch: str | None, includes: list[Path],
              defines: dict[str, object], options: tuple[str, ...]) -> list[str]:
    """The nvcc command line for a shared library (pure: tests check it without a GPU)."""
    argv = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-O3", "-lineinfo", "-std=c++17"]
    if arch:
        argv.append(f"-arch={arch}")
    argv += [f"-I{p}" for p in includes]
    argv += [f"-D{k}={v}" for k, v in defines.items()]
    argv += list(options)
    argv += ["-o", str(out), *map(str, sources)]
    return argv


def errors_only(text: str, replace: dict[str, str], limit: int = 12) -> str:
    """The compiler's error lines (with the line after each, nvcc's source excerpt), build paths replaced
    by the user's file names; the whole output when no line says 'error'."""
    for old, new in replace.items():
        text = text.replace(old, new)
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    picked = [ln for ln in lines
              if re.search(r"\berror\b", ln, re.I) and not re.search(r"errors? detected in the compilation", ln)]
    return "\n".join((picked or lines)[:limit])


HEADER_SUFFIXES = (".h", ".cuh", ".hpp", ".hh", ".inc", ".inl")


def build_key(argv: list[str], sources: list[Path], includes: list[Path]) -> str:
    """What a build depends on: the nvcc command, the sources and the headers beside them (the include
    folders' header files, not their subfolders). Equal keys: the library already built can be reused."""
    h = hashlib.sha256("\0".join(argv).encode())
    files = list(sources)
    for d in includes:
        try:
            files += sorted(p for p in d.iterdir() if p.suffix in HEADER_SUFFIXES and p.is_file())[:200]
        except OSError:
            continue
    for f in files:
        h.update(str(f).encode() + b"\0")
        try:
            h.update(f.read_bytes())
        except OSError:
            h.update(b"<unreadable>")
    return h.hexdigest()


def compile_library(sources: list[Path], out: Path, arch: str | None, includes: list[Path],
                    defines: dict[str, object], options: tuple[str, ...], replace: dict[str, str]) -> Library:
    """nvcc, unless `out` was built by this same command from the same files (the checks, profiler and
    sanitizer children of one kernel share a build folder: the library is compiled once)."""
    argv = nvcc_argv(find_nvcc(), sources, out, arch, includes, defines, options)
    stamp = out.with_name(out.name + ".key")
    key = build_key(argv, sources, includes)
    if out.is_file() and stamp.is_file() and stamp.read_text() == key:
        return Library(out, tuple(argv))
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=NVCC_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise CompileError(f"nvcc did not finish in {NVCC_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise CompileError(errors_only(proc.stderr + proc.stdout, replace))
    stamp.write_text(key)
    return Library(out, tuple(argv))


def course_methods(text: str) -> dict[str, str]:
    """Each GPUInterface method the student's file defines, with its parameter list as written."""
    found: dict[str, str] = {}
    for m in re.finditer(r"GPUInterface\s*::\s*(\w+)\s*\(([^)]*)\)", strip_comments(text)):
        found.setdefault(m.group(1), " ".join(m.group(2).split()))
    return found


def course_header(methods: dict[str, str]) -> str:
    """gpu-new-forward.h declaring exactly the methods the student defined, with their own parameter lists
    (const-ness and names differ between semesters and students)."""
    decls = "\n".join(f"    void {name}({params});" for name, params in methods.items())
    return ("// Generated by profconv from the methods new-forward.cu defines (stands in for the course's header).\n"
            "#ifndef SRC_LAYER_CUSTOM_GPU_NEW_FORWARD_H\n#define SRC_LAYER_CUSTOM_GPU_NEW_FORWARD_H\n"
            "#include <cuda_runtime.h>\n\nclass GPUInterface {\n  public:\n"
            f"{decls}\n}};\n\n#endif\n")


def minidnn_driver(stride: bool, single: bool = False) -> str:
    """extern "C" entry points calling a mini-dnn GPUInterface (with the trailing stride S = 1 when it has one;
    `single`: the first Fall 2020 form, conv_forward_gpu alone on host pointers)."""
    s_param, s_arg = (", int pc_s", ", pc_s") if stride else ("", "")
    dims = "int pc_b, int pc_m, int pc_c, int pc_h, int pc_w, int pc_kk"
    args = "pc_b, pc_m, pc_c, pc_h, pc_w, pc_kk"
    if single:
        return f"""// Generated by profconv: calls the student's GPUInterface::conv_forward_gpu with host pointers.
#include "gpu-new-forward.h"

extern "C" void profconv_course_forward(float* pc_hy, float* pc_hx, float* pc_hk, {dims}) {{
  GPUInterface pc_g;
  pc_g.conv_forward_gpu(pc_hy, pc_hx, pc_hk, {args});
}}
"""
    return f"""// Generated by profconv: calls the student's GPUInterface methods (a separate file, so the
// student's macros cannot reach these names).
#include "gpu-new-forward.h"

extern "C" void profconv_course_prolog(float* pc_hy, float* pc_hx, float* pc_hk, float** pc_dy, float** pc_dx,
                                       float** pc_dk, {dims}{s_param}) {{
  GPUInterface pc_g;
  pc_g.conv_forward_gpu_prolog(pc_hy, pc_hx, pc_hk, pc_dy, pc_dx, pc_dk, {args}{s_arg});
}}

extern "C" void profconv_course_forward(float* pc_y, float* pc_x, float* pc_k, {dims}{s_param}) {{
  GPUInterface pc_g;
  pc_g.conv_forward_gpu(pc_y, pc_x, pc_k, {args}{s_arg});
}}

extern "C" void profconv_course_epilog(float* pc_hy, float* pc_y, float* pc_x, float* pc_k, {dims}{s_param}) {{
  GPUInterface pc_g;
  pc_g.conv_forward_gpu_epilog(pc_hy, pc_y, pc_x, pc_k, {args}{s_arg});
}}
"""


COURSE_HEADER = "gpu-new-forward.h"
MXNET_FORMS = ("mxnet", "mxnet-generic")
INCLUDE = re.compile(r'^([ \t]*#[ \t]*include[ \t]*)([<"])([^>"\n]+)[>"]', re.M)
# a CUDA header by the course image's absolute path: /usr/local/cuda-8.0/targets/x86_64-linux/include/X.h
TOOLKIT_HEADER = re.compile(r"^/usr/local/cuda[^/]*/(?:targets/[^/]+/)?include/(.+)$")


def map_includes(text: str, exists=lambda p: Path(p).is_file()) -> tuple[str, dict[str, str]]:
    """The source with each absolute include of a CUDA toolkit header that is not on this machine (the
    course image's /usr/local/cuda-8.0/...) rewritten to the installed toolkit's `<X.h>`, one line for one
    line (compiler messages keep their line numbers); and what was rewritten (pure given `exists`)."""
    mapping: dict[str, str] = {}

    def repl(m: re.Match) -> str:
        path = m.group(3)
        toolkit = TOOLKIT_HEADER.match(path)
        if not toolkit or exists(path):
            return m.group(0)
        mapping[path] = f"<{toolkit.group(1)}>"
        return f"{m.group(1)}<{toolkit.group(1)}>"

    return INCLUDE.sub(repl, text), mapping


def header_places(text: str) -> list[tuple[int, str]]:
    """Where the course's tree puts gpu-new-forward.h for each quoted include of it: (how many folders up,
    the path below that), e.g. '../../src/layer/custom/gpu-new-forward.h' -> (2, 'src/layer/custom/...')."""
    places = []
    for m in INCLUDE.finditer(strip_comments(text)):
        path = m.group(3).strip()
        if m.group(2) != '"' or Path(path).name != COURSE_HEADER or path.startswith("/"):
            continue
        parts = list(Path(path).parts)
        up = 0
        while parts and parts[0] in ("..", "."):
            up += parts.pop(0) == ".."
        places.append((up, "/".join(parts)))
    return places


def course_tree(text: str, build_dir: Path, header: str) -> list[Path]:
    """Lay out the course's folder tree under build_dir/tree so that every relative include of the course
    header resolves (the header written where each include points); the include folders to add."""
    tree = build_dir / "tree"
    includes = []
    for up, below in header_places(text):
        if up == 0 and "/" not in below:
            continue  # "gpu-new-forward.h" beside the file: the build copy's own folder has it
        start = tree.joinpath(*(f"up{i}" for i in range(up)))
        start.mkdir(parents=True, exist_ok=True)
        target = (tree / below) if up else (start / below)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(header)
        if start not in includes:
            includes.append(start)
    return includes


REMOVED_PROPS = {"clockRate": "cudaDevAttrClockRate", "memoryClockRate": "cudaDevAttrMemoryClockRate",
                 "deviceOverlap": "cudaDevAttrGpuOverlap", "kernelExecTimeoutEnabled": "cudaDevAttrKernelExecTimeout",
                 "computeMode": "cudaDevAttrComputeMode"}
PROP_ACCESS = re.compile(r"\b\w+(?:\[[^\]\n]*\])?\s*(?:\.|->)\s*(" + "|".join(REMOVED_PROPS) + r")\b")


def toolkit_header(name: str, nvcc: str | None) -> Path | None:
    """One of this CUDA toolkit's headers (nvcc's own include folder, $CUDA_HOME's, /usr/local/cuda's)."""
    import os

    homes = [Path(nvcc).resolve().parent.parent] if nvcc else []
    homes += [Path(h) for h in (os.environ.get("CUDA_HOME"), "/usr/local/cuda") if h]
    for home in homes:
        for sub in ("include", "targets/x86_64-linux/include"):
            if (home / sub / name).is_file():
                return home / sub / name
    return None


def map_removed_props(text: str, removed: bool) -> tuple[str, dict[str, str]]:
    """A file's reads of cudaDeviceProp fields this toolkit removed (`removed`: CUDA 13's struct has no
    deviceOverlap) as the same value asked with cudaDeviceGetAttribute, one line for one line; and what was
    rewritten. The course's toolkit had the fields (pure)."""
    if not removed:
        return text, {}
    mapping: dict[str, str] = {}

    def repl(m: re.Match) -> str:
        mapping[f".{m.group(1)}"] = f"profconv_device_attr({REMOVED_PROPS[m.group(1)]})"
        return mapping[f".{m.group(1)}"]

    return PROP_ACCESS.sub(repl, text), mapping


def provided_sources(text: str, folder: Path) -> list[Path]:
    """The course tree's own sources a file uses and does not bring (Spring 2025's matmul.h / matmul.cu, the
    tiled matmul its unroll + matmul files call): profconv's implementations of the same declarations."""
    quoted = {Path(m.group(3).strip()).name for m in INCLUDE.finditer(strip_comments(text)) if m.group(2) == '"'}
    if "matmul.h" in quoted and not (folder / "matmul.h").is_file():
        return [shim_dir() / "minidnn" / "matmul.cu"]
    if "matmul.h" in quoted and (folder / "matmul.cu").is_file():
        return [folder / "matmul.cu"]  # the student's own copy of the course's file
    return []


def libraries(text: str, nvcc: str | None = None) -> tuple[str, ...]:
    """Link options for the CUDA libraries the course's build linked and the file uses (cuBLAS): the
    toolkit's, else a pip wheel's (nvidia-cublas, as PyTorch installs it: headers and a versioned .so)."""
    code = strip_comments(text)
    if not re.search(r"#\s*include\s*[<\"]cublas", code):
        return ()
    home = Path(nvcc).resolve().parent.parent if nvcc else None
    if home is not None and (home / "include" / "cublas_v2.h").is_file():
        return ("-lcublas",)
    wheel = pip_library("cublas_v2.h", "libcublas.so")
    if wheel is None:
        return ("-lcublas",)  # the compiler's own message says what is missing
    include, lib = wheel
    return (f"-I{include.parent}", f"-L{lib.parent}", "-Xlinker", f"-l:{lib.name}", "-Xlinker",
            f"-rpath={lib.parent}")


def pip_library(header: str, stem: str) -> tuple[Path, Path] | None:
    """(the header, the shared library) of a CUDA library installed as a pip wheel (site-packages/nvidia/...)."""
    import sys

    for base in sys.path:
        root = Path(base or ".") / "nvidia"
        if not root.is_dir():
            continue
        headers = sorted(root.glob(f"*/include/{header}")) + sorted(root.glob(f"*/*/include/{header}"))
        for h in headers:
            libs = sorted(h.parent.parent.glob(f"lib*/{stem}*"))
            if libs:
                return h, libs[0]
    return None


def build_course(source: Path, flavour: str, build_dir: Path, arch: str | None, defines: dict[str, object],
                 options: tuple[str, ...]) -> Library:
    """The course file compiled as the course built it: with a generated header laid out in the course's
    folder tree (mini-dnn) or the mshadow stand-in (MXNet); its text unchanged but for absolute CUDA
    include paths of the course image, mapped to this toolkit (recorded in `include_map`)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    text, include_map = map_includes(source.read_text(errors="replace"))
    props = toolkit_header("driver_types.h", shutil.which("nvcc"))
    text, prop_map = map_removed_props(text, props is not None and "deviceOverlap" not in props.read_text(errors="replace"))
    if prop_map:
        include_map = {**include_map, **prop_map}
        options = (*options, "-include", str(shim_dir() / "profconv_compat.h"))
    replace_paths = {str(build_dir / COURSE_HEADER): f"{COURSE_HEADER} (generated by profconv from your methods)",
                     str(build_dir / source.name): str(source), str(build_dir): str(source.parent)}
    options = (*options, *libraries(text, shutil.which("nvcc")))
    if flavour in MXNET_FORMS:
        copy = build_dir / "new-forward.cuh"
        copy.write_text(text)
        driver = build_dir / "mxnet_driver.cu"
        driver.write_text((shim_dir() / "mxnet_driver.cu").read_text())
        replace_paths = {str(copy): str(source), **replace_paths}
        sources = [driver, shim_dir() / "helpers.cu"]
        includes = [build_dir, shim_dir(), source.parent]
    else:
        methods = course_methods(text)
        missing = [m for m in (("conv_forward_gpu",) if flavour == "minidnn-single" else COURSE_METHODS)
                   if m not in methods]
        if missing:
            raise CompileError(f"{source}: GPUInterface::{', '.join(missing)} not defined")
        header = course_header(methods)
        (build_dir / COURSE_HEADER).write_text(header)
        copy = build_dir / source.name
        copy.write_text(text)
        driver = build_dir / "profconv_driver.cu"
        driver.write_text(minidnn_driver(flavour == "minidnn-stride", single=flavour == "minidnn-single"))
        sources = [copy, driver, shim_dir() / "helpers.cu", *provided_sources(text, source.parent)]
        tree = course_tree(text, build_dir, header)
        replace_paths.update({str(p): "(the course's tree)" for p in tree})
        includes = [build_dir, *tree, source.parent, shim_dir() / "minidnn"]
    built = compile_library(sources, build_dir / "libcourse.so", arch, includes, defines, options, replace_paths)
    return replace(built, include_map=include_map)


def build_host(source: Path, build_dir: Path, arch: str | None, defines: dict[str, object],
               options: tuple[str, ...], tag: str = "") -> Library:
    build_dir.mkdir(parents=True, exist_ok=True)
    return compile_library([source, shim_dir() / "helpers.cu"], build_dir / f"libhost{tag}.so", arch,
                           [source.parent], defines, options, {})


def nvrtc_message(log: str, source: Path) -> str:
    """NVRTC's log with its temporary file name replaced by the user's file: `my_conv.cu(12): error: ...`."""
    text = re.sub(r"[^\s:()]*?\.cu(?=\(\d+\))", str(source), log)
    return errors_only(text, {})
