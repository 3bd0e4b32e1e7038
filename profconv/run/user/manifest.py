"""Kernel declarations: one TOML format, in a manifest file or a kernel's header comment (pure, no GPU).

A declaration says what a kernel file is and how it is launched. Built-in variants (kernels/*.toml)
and the user's kernels (`profconv run --kernel PATH`) are read by this same module. Keys:

  name = "my_conv"            # the result rows' variant name (default: the file or folder name)
  contract = "device"         # device | host | course | python (default: detected from the source)
  source = "my_conv.cu"       # the kernel file, relative to the manifest
  function = "conv_forward"   # device: the __global__ function; host: the extern "C" function;
                              # python: the function (default "launch")
  args = ["y", "x", "w", "B", "M", "C", "H", "W", "K"]   # device/host: the arguments in order
  grid = ["ceil(W_out / TILE) * ceil(H_out / TILE)", "M", "B"]  # device: 1 to 3 expressions
  block = ["TILE", "TILE"]    # device: 1 to 3 expressions
  shared_bytes = "0"          # device: dynamic shared memory, an expression
  options = ["-O3"]           # extra compiler flags (NVRTC for device, nvcc for host and course)
  precision = "fp32"          # fp32 | fp16 (inputs, filters and output in that type)
  tolerance = 1e-5            # largest relative L2 error against the float64 reference
  description = "..."         # one line for the tables
  [defines]                   # -DNAME=value for the compiler; usable in expressions
  TILE = 16
  [sweep]                     # candidate values of defines: each is checked and timed per layer,
  TILE = [8, 16, 32]          # the fastest correct one is used and recorded

Argument and expression names: x (input B x C x H x W; also `input`), w (filters M x C x K x K;
also `k`, `mask`), bias (length M, zeros for a layer without bias), y (output B x M x H_out x
W_out; also `out`, `output`), the ints B M C H W K pad H_out W_out, and every define. Expressions
use + - * / // % and ceil(), min(), max(); `/` is exact division (use ceil() or //).

In a kernel file the same TOML may sit in a leading comment: `/* profconv` ... `*/` in .cu/.cuh,
lines starting `# ` after a `# profconv` line in .py. A manifest file is `profconv.toml` in a
kernel folder or `<kernel stem>.toml` beside the kernel.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profconv.errors import InputError, did_you_mean
from profconv.run.user import forms

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONTRACTS = ("device", "host", "course", "python")
PRECISIONS = {"fp32": 1e-5, "fp16": 1e-2}
POINTERS = {"x": "x", "input": "x", "w": "w", "k": "w", "mask": "w", "bias": "bias", "y": "y", "out": "y", "output": "y"}
DIMS = ("B", "M", "C", "H", "W", "K", "pad", "H_out", "W_out")
KERNEL_SUFFIXES = (".cu", ".cuh", ".py")
MANIFEST_NAME = "profconv.toml"
COURSE_STEMS = ("new-forward", "m3-forward")  # a course file is named after its folder (req_1/m3-forward.cu -> req_1)
USER_KEYS = {"name", "contract", "source", "function", "args", "grid", "block", "shared_bytes", "options", "precision",
             "tolerance", "description", "technique", "defines", "sweep", "timeout"}
# built-in variants only (kernels/*.toml): what the ladder's tables and reports need
KEYS = USER_KEYS | {"module", "params", "device", "host_io", "baseline", "arithmetic", "order", "sources"}


class ManifestError(InputError):
    """A declaration that cannot be used; the message names the file and the key."""


class UnrecognisedKernel(ManifestError):
    """A kernel file whose source says nothing profconv can run (no kernel or course form found, a course
    signature of another shape, a device kernel without its launch, several candidate files): in a run of
    several --kernels it is that kernel's FAILED row. A manifest that is not valid, not UTF-8 text, or names
    a source outside its folder stays a usage error (ManifestError) that stops the run."""


@dataclass(frozen=True)
class Declaration:
    """A kernel file and how to run it, as read from its manifest (or detected)."""

    name: str
    contract: str  # device | host | course | python
    where: Path  # the file the declaration was read from (manifest, or the kernel with a header manifest)
    source: Path | None  # the kernel file
    function: str | None = None
    args: tuple[str, ...] = ()
    grid: tuple[str, ...] = ()
    block: tuple[str, ...] = ()
    shared_bytes: str = "0"
    options: tuple[str, ...] = ()
    precision: str = "fp32"
    tolerance: float = 1e-5
    description: str = ""
    technique: str = ""
    defines: dict[str, Any] = field(default_factory=dict)
    sweep: dict[str, list] = field(default_factory=dict)
    timeout: float | None = None
    flavour: str | None = None  # course: the form (forms.py): minidnn | minidnn-stride | minidnn-single | mxnet | mxnet-generic
    error: str | None = None  # a --kernel that cannot be run (not recognised): its FAILED row's reason
    # built-in variants
    module: str | None = None  # python: a dotted module holding `function`
    params: str | None = None  # "module:attr" giving what a swept built-in chose for a shape
    device: str = "gpu"  # cpu | gpu | cudnn
    host_io: bool = False
    baseline: str | None = None
    arithmetic: str | None = None
    order: int = 1000
    sources: tuple[str, ...] = ()  # other kernel files a built-in compiles (hashed with the source)
    builtin: bool = False

    def candidates(self) -> list[dict[str, Any]]:
        """Every combination of the swept defines (one empty dict when nothing is swept)."""
        if not self.sweep:
            return [{}]
        keys = list(self.sweep)
        return [dict(zip(keys, vals)) for vals in itertools.product(*(self.sweep[k] for k in keys))]

    def source_sha256(self) -> str | None:
        """Hash of the kernel file, or of every file it names (manifest included) for a folder."""
        files = [p for p in (self.source, self.where) if p is not None and p.is_file()]
        if not files:
            return None
        h = hashlib.sha256()
        for p in dict.fromkeys(files):
            h.update(p.read_bytes())
        return h.hexdigest()


# ---------------------------------------------------------------- expressions


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_FUNCS = {"ceil": math.ceil, "min": min, "max": max}


def check_expression(text: str, names: set[str]) -> None:
    """Raise ValueError when `text` is not an expression of `names` this module can evaluate."""
    try:
        tree = ast.parse(str(text), mode="eval")
    except SyntaxError:
        raise ValueError(f"{text!r} is not an expression") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in names and node.id not in _FUNCS:
            raise ValueError(f"unknown name {node.id!r} in {text!r} (names: {', '.join(sorted(names))})")
        if not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Constant, ast.Name,
                                 ast.Call, ast.Load, *_BINOPS)):
            raise ValueError(f"{text!r}: only numbers, names, + - * / // % and ceil/min/max are allowed")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS):
            raise ValueError(f"{text!r}: only ceil(), min() and max() may be called")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise ValueError(f"{text!r}: only numbers are allowed as constants")


def evaluate(text: str | int, env: dict[str, int | float]) -> int:
    """The integer value of a launch expression (exact division rounds down only through ceil or //)."""
    if isinstance(text, int):
        return text

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Call):
            return _FUNCS[node.func.id](*(ev(a) for a in node.args))  # type: ignore[attr-defined,operator]
        raise ValueError(f"cannot evaluate {ast.dump(node)}")

    value = ev(ast.parse(str(text), mode="eval"))
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{text!r} = {value:g} is not a whole number (use ceil() or //)")
        value = int(value)
    return int(value)


def shape_env(B: int, M: int, C: int, H: int, W: int, K: int, P: int, defines: dict[str, Any]) -> dict[str, Any]:
    env: dict[str, Any] = {"B": B, "M": M, "C": C, "H": H, "W": W, "K": K, "pad": P,
                           "H_out": H + 2 * P - K + 1, "W_out": W + 2 * P - K + 1}
    env.update({k: v for k, v in defines.items() if isinstance(v, (int, float))})
    return env


# ---------------------------------------------------------------- reading


def header_manifest(text: str, suffix: str) -> str | None:
    """The TOML of a leading `/* profconv ... */` (.cu/.cuh) or `# profconv` comment block (.py)."""
    if suffix == ".py":
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if line.strip() == "# profconv":
                body = []
                for ln in lines[i + 1:]:
                    if not ln.startswith("#"):
                        break
                    body.append(ln[2:] if ln.startswith("# ") else ln[1:])
                return "\n".join(body)
        return None
    m = re.search(r"/\*\s*profconv\s*\n(.*?)\*/", text, re.S)
    return m.group(1) if m else None


def _toml(text: str, where: Path) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{where}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ManifestError(f"{where}: not valid TOML: nested too deeply") from None


def _text(path: Path) -> str:
    """A manifest's or kernel's text, or one ManifestError line (not UTF-8, unreadable)."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _is_course_file(path: Path) -> bool:
    """A folder's course file is told by its source (a course form), not by its name."""
    if path.suffix not in (".cu", ".cuh"):
        return False
    try:
        found = forms.detect(path.read_text(errors="replace"))
    except OSError:
        return False
    return bool(found.form or found.error)


def find(path: Path) -> tuple[Path, dict, Path | None]:
    """(where the declaration was read, its table, the kernel file) for a kernel file, folder or manifest."""
    if not path.exists():
        raise ManifestError(f"{path}: no such file or folder")
    if path.is_dir():
        manifest = path / MANIFEST_NAME
        if manifest.is_file():
            return manifest, _toml(_text(manifest), manifest), None
        kernels = sorted(p for p in path.iterdir() if p.suffix in KERNEL_SUFFIXES and p.is_file())
        if not kernels:
            raise ManifestError(f"{path}: no kernel file (.cu, .cuh or .py) and no {MANIFEST_NAME} in this folder")
        picked = kernels if len(kernels) == 1 else [p for p in kernels if _is_course_file(p)]
        if len(picked) != 1:
            listed = ", ".join(p.name for p in kernels)
            raise UnrecognisedKernel(f"{path}: {MANIFEST_NAME} is missing and the kernel file is ambiguous "
                                f"(.cu/.cuh/.py files: {listed}); add a {MANIFEST_NAME} naming `source`")
        return find(picked[0])
    if path.suffix == ".toml":
        return path, _toml(_text(path), path), None
    if path.suffix not in KERNEL_SUFFIXES:
        raise ManifestError(f"{path}: a kernel is a .cu, .cuh or .py file, a folder or a .toml manifest")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError(f"{path}: not a text file (not UTF-8); save it as UTF-8") from None
    header = header_manifest(text, path.suffix)
    if header is not None:
        return path, _toml(header, path), path
    beside = path.with_suffix(".toml")
    if beside.is_file():
        table = _toml(_text(beside), beside)
        return beside, table, path
    return path, {}, path


def detect_contract(source: Path, text: str, table: dict) -> str:
    """What a kernel file is, from its source text (never its name; only .py is read by suffix)."""
    if source.suffix == ".py":
        return "python"
    course = forms.detect(text)
    if course.form or course.error:
        return "course"
    if "grid" in table or "block" in table:
        return "device"
    heads = [m.group(1) for m in re.finditer(r'extern\s+"C"\s*([^({;]*)\(', text)]
    if any("__global__" not in h for h in heads):
        return "host"
    if "__global__" in text:
        return "device"
    raise UnrecognisedKernel(f"{source}: no __global__ kernel, extern \"C\" function or course function found; "
                        "say `contract = ...` in the manifest")


def course_flavour(source: Path, text: str) -> str:
    """The course form (forms.py): minidnn, minidnn-stride, minidnn-single, mxnet or mxnet-generic."""
    found = forms.detect(text)
    if found.error:
        raise UnrecognisedKernel(f"{source}: {found.error}")
    if found.form is None:
        raise UnrecognisedKernel(f"{source}: neither GPUInterface::conv_forward_gpu (mini-dnn new-forward.cu) "
                            "nor forward<gpu, float> (MXNet new-forward.cuh) is defined")
    return found.form


def _strings(where: Path, key: str, value: Any, allow_int: bool = False) -> tuple[str, ...]:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) or (allow_int and isinstance(v, int)) for v in value):
        raise ManifestError(f"{where}: `{key}` must be a list of {'expressions' if allow_int else 'strings'}")
    return tuple(str(v) for v in value)


def parse(table: dict, where: Path, source: Path | None, contract: str | None = None, builtin: bool = False,
          base: Path | None = None) -> Declaration:
    """Validate a declaration table; `source` is the kernel file when the table came from beside or inside it."""
    _check_keys(table, where, builtin)
    source = _source(table, where, source, base or where.parent, builtin)
    device = table.get("device", "gpu")
    if device not in ("cpu", "gpu", "cudnn"):
        raise ManifestError(f"{where}: `device` must be cpu, gpu or cudnn")
    text = _text(source) if source is not None and source.is_file() and source.suffix != ".py" else ""
    contract = contract or table.get("contract")
    if contract is None:
        if source is None:
            raise ManifestError(f"{where}: say `source = ...` (the kernel file) or `contract = ...`")
        contract = detect_contract(source, text, table)
    if contract not in CONTRACTS:
        raise ManifestError(f"{where}: contract {contract!r} is not one of {', '.join(CONTRACTS)}")
    precision, tolerance = _precision(table, where, builtin)
    defines, sweep = _macros(table, where)
    names = set(DIMS) | set(defines) | set(sweep)
    name = table.get("name") or safe_name(source.stem if source is not None and source.stem not in COURSE_STEMS else
                                          (source.parent.name if source is not None else where.parent.name))
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][\w.+-]*", name):
        raise ManifestError(f"{where}: name {name!r} must be letters, digits, '.', '_', '+' or '-'")
    options = _strings(where, "options", table.get("options", []))
    args = _strings(where, "args", table.get("args", []))
    grid = _strings(where, "grid", table.get("grid", []), allow_int=True)
    block = _strings(where, "block", table.get("block", []), allow_int=True)
    shared = str(table.get("shared_bytes", "0"))
    timeout = table.get("timeout")
    if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ManifestError(f"{where}: `timeout` must be a positive number of seconds")
    function = _function(table, where, contract, source, text, args, names)
    _launch_shape(where, contract, grid, block, shared, names)
    flavour = None
    if contract == "course":
        if source is None:
            raise ManifestError(f"{where}: a course kernel needs `source` (new-forward.cu or new-forward.cuh)")
        flavour = course_flavour(source, text)
    if contract == "python":
        function = function or "launch"
        if table.get("module") is None and device != "cpu" and (source is None or source.suffix != ".py"):
            raise ManifestError(f"{where}: a python kernel needs `source` naming its .py file")
    return Declaration(
        name=name, contract=contract, where=where, source=source, function=function, args=args, grid=grid,
        block=block, shared_bytes=shared, options=options,
        precision=precision, tolerance=tolerance,
        description=str(table.get("description", "")), technique=str(table.get("technique", "")),
        defines=dict(defines), sweep={k: list(v) for k, v in sweep.items()}, timeout=timeout, flavour=flavour,
        module=table.get("module"), params=table.get("params"), device=device,
        host_io=bool(table.get("host_io", False)), baseline=table.get("baseline"),
        arithmetic=table.get("arithmetic"), order=int(table.get("order", 1000)),
        sources=tuple(table.get("sources", ())), builtin=builtin,
    )


def _check_keys(table: dict, where: Path, builtin: bool) -> None:
    unknown = sorted(set(table) - (KEYS if builtin else USER_KEYS))
    if unknown:
        hint = "".join(did_you_mean(k, USER_KEYS) for k in unknown[:1])
        raise ManifestError(f"{where}: unknown key(s) {', '.join(unknown)}{hint} (known: {', '.join(sorted(USER_KEYS))})")
    for key in ("name", "contract", "function", "precision", "description", "technique", "device"):
        if key in table and not isinstance(table[key], str):  # a list or table there: one line, not a TypeError
            raise ManifestError(f"{where}: `{key}` must be a string, not {type(table[key]).__name__}")


def _source(table: dict, where: Path, source: Path | None, base: Path, builtin: bool) -> Path | None:
    """The kernel file `source = ...` names (a user's only inside the manifest's folder), else `source`."""
    if "source" not in table:
        return source
    if not isinstance(table["source"], str):
        raise ManifestError(f"{where}: `source` must be a file name")
    source = (base / table["source"]).resolve() if not builtin else base / table["source"]
    if not builtin and base.resolve() not in source.parents:  # another student's file, /etc/...: never built
        raise ManifestError(f"{where}: source {table['source']!r} is outside the manifest's folder; "
                            "name a file in that folder")
    if not builtin and not source.is_file():
        raise ManifestError(f"{where}: source {table['source']!r} not found beside it")
    return source


def _precision(table: dict, where: Path, builtin: bool) -> tuple[str, float]:
    precision = table.get("precision", "fp32")
    if precision not in PRECISIONS and not (builtin and precision in ("fp64", "tf32")):
        raise ManifestError(f"{where}: precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    tolerance = table.get("tolerance", PRECISIONS.get(precision, 1e-6))
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 < tolerance < 1:
        raise ManifestError(f"{where}: `tolerance` must be a number between 0 and 1")
    return precision, float(tolerance)


def _macros(table: dict, where: Path) -> tuple[dict, dict]:
    """[defines] (NAME = value) and [sweep] (NAME = [values], at most 64 combinations)."""
    defines = table.get("defines", {})
    sweep = table.get("sweep", {})
    if not isinstance(defines, dict) or not all(isinstance(v, (int, float, str)) for v in defines.values()):
        raise ManifestError(f"{where}: [defines] holds NAME = number or string")
    if not isinstance(sweep, dict) or not all(isinstance(v, list) and v for v in sweep.values()):
        raise ManifestError(f"{where}: [sweep] holds NAME = [value, value, ...]")
    for k, vals in sweep.items():
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            raise ManifestError(f"{where}: [sweep] {k} must list numbers")
    bad = [k for k in (*defines, *sweep) if not re.fullmatch(r"[A-Za-z_]\w*", k)]
    if bad:
        raise ManifestError(f"{where}: {', '.join(bad)} cannot be a macro name")
    if len(sweep) and len(list(itertools.product(*sweep.values()))) > 64:
        raise ManifestError(f"{where}: [sweep] has more than 64 combinations")
    return defines, sweep


def _function(table: dict, where: Path, contract: str, source: Path | None, text: str, args: tuple[str, ...],
              names: set[str]) -> str | None:
    """The function a device or host kernel is called by (found in the source when not said)."""
    function = table.get("function")
    if contract not in ("device", "host"):
        return function
    if source is None or source.suffix not in (".cu", ".cuh"):
        raise ManifestError(f"{where}: a {contract} kernel needs `source` naming its .cu file")
    if not args:
        raise UnrecognisedKernel(f"{where}: say the kernel's arguments in order, e.g. "
                                 'args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]')
    for a in args:
        if a not in POINTERS and a not in names:
            raise ManifestError(f"{where}: argument {a!r} is not one of {', '.join([*POINTERS, *DIMS])} "
                                "or a define")
    if function is None:
        found = re.findall(r"__global__\s+void\s+(\w+)" if contract == "device" else
                           r'extern\s+"C"\s+(?:__host__\s+)?\w+\s+(\w+)\s*\(', text)
        if len(found) != 1:
            raise UnrecognisedKernel(f"{where}: say `function = ...`: {source.name} has "
                                     f"{len(found) or 'no'} candidate functions ({', '.join(found) or 'none'})")
        function = found[0]
    if not re.search(rf"\b{re.escape(function)}\s*\(", text):
        raise ManifestError(f"{where}: function {function!r} is not in {source.name}")
    return function


def _launch_shape(where: Path, contract: str, grid: tuple[str, ...], block: tuple[str, ...], shared: str,
                  names: set[str]) -> None:
    """A device kernel's grid, block and shared bytes: 1-3 expressions over the dims and defines."""
    if contract != "device":
        if grid or block:
            raise ManifestError(f"{where}: `grid` and `block` are for device kernels; a {contract} kernel "
                                "launches itself")
        return
    if not 1 <= len(grid) <= 3 or not 1 <= len(block) <= 3:
        raise ManifestError(f"{where}: a device kernel needs `grid` and `block`, 1 to 3 expressions each")
    for expr in (*grid, *block, shared):
        try:
            check_expression(expr, names)
        except ValueError as exc:
            raise ManifestError(f"{where}: {exc}") from None


def load(path: str | Path, contract: str | None = None) -> Declaration:
    """The declaration of a user's kernel: a .cu/.cuh/.py file, a folder, or a .toml manifest."""
    if contract is not None and contract not in CONTRACTS:
        raise ManifestError(f"--contract {contract!r}{did_you_mean(contract, CONTRACTS)} is not one of {', '.join(CONTRACTS)}")
    where, table, source = find(Path(path))
    return parse(table, where, source, contract)


def load_many(paths: list[str], contract: str | None, reserved: set[str]) -> list[Declaration]:
    """The declarations of several --kernel paths, with names made unique and distinct from `reserved` (the
    built-in variants): naive -> user-naive, tiled -> tiled-2. A path that does not exist (or a bad
    --contract, a manifest that cannot be used) stops here; a file whose source cannot be recognised
    (UnrecognisedKernel) is a declaration with `error` set: that kernel's FAILED row, the others still run."""
    from dataclasses import replace

    if contract is not None and contract not in CONTRACTS:
        raise ManifestError(f"--contract {contract!r}{did_you_mean(contract, CONTRACTS)} is not one of {', '.join(CONTRACTS)}")
    taken = set(reserved)
    decls = []
    for path in paths:
        try:
            d = load(path, contract)
        except UnrecognisedKernel as exc:
            d = unrecognised(Path(path), str(exc))
        name = d.name if d.name not in reserved else f"user-{d.name}"
        n = 2
        while name in taken:
            name, n = f"{d.name}-{n}", n + 1
        taken.add(name)
        decls.append(replace(d, name=name) if name != d.name else d)
    return decls


def safe_name(stem: str) -> str:
    """A file's or folder's name as a variant name (a name the manifest declares is checked, never changed):
    'new-forward-V1(const)' -> 'new-forward-V1-const', 'new-forwardOp#1' -> 'new-forwardOp-1'."""
    name = re.sub(r"[^\w.+-]+", "-", stem).strip("-.") or "kernel"
    return name if name[0].isalnum() else "k" + name


def unrecognised(path: Path, why: str) -> Declaration:
    """A --kernel that exists but cannot be run: named like a good one, its reason kept for its FAILED row."""
    source = path if path.is_file() else None
    if path.is_dir():
        kernels = sorted(p for p in path.iterdir() if p.suffix in (".cu", ".cuh") and p.is_file())
        picked = kernels if len(kernels) == 1 else [p for p in kernels if _is_course_file(p)]
        source = picked[0] if len(picked) == 1 else None
    stem = path.stem if path.is_file() and path.stem not in COURSE_STEMS else (
        path.parent.name if path.is_file() else path.name)
    name = safe_name(stem)
    text = ""
    if source is not None and source.suffix in (".cu", ".cuh"):
        try:
            text = source.read_text(errors="replace")
        except OSError:
            text = ""
    course = forms.detect(text)
    contract = "course" if course.form or course.error else "unknown"
    return Declaration(name=name, contract=contract, where=path, source=source, flavour=course.form, error=why)


def reload_path(d: Declaration) -> Path:
    """The path that `load` turns into this declaration again (what a child process is given)."""
    if d.source is not None and d.where in (d.source, d.source.with_suffix(".toml")):
        return d.source
    return d.where
