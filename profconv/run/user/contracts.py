"""A declaration made runnable: the four contracts as `Variant`s (compiling happens on first use, on the GPU side).

device: one __global__ function compiled with NVRTC, launched with the declared grid/block/shared bytes.
host:   extern "C" function(s) compiled with nvcc -shared, called through ctypes with device pointers.
course: the ECE 408 new-forward.cu (mini-dnn GPUInterface: prolog, conv_forward_gpu, epilog) or the MXNet
        new-forward.cuh (forward<gpu, float>), compiled unchanged against a generated header or shim.
python: a module's launch(x, w, bias, out, shape) on CuPy arrays (CuPy RawKernel, Numba, Triton, ...).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import inspect
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from profconv.run import gpu
from profconv.run.models import ConvShape
from profconv.run.user import build, calls, hostcopy
from profconv.run.user.manifest import POINTERS, Declaration, evaluate, shape_env
from profconv.run.variant import Variant

Op = Callable[[Any, Any, Any, Any, ConvShape], Any]  # (x, w, bias, out, shape) -> out


class KernelError(RuntimeError):
    """The user's kernel cannot run on this layer (a CUDA error it raised, or an input it does not take)."""


def _key(s: ConvShape) -> tuple[int, ...]:
    return (s.B, s.M, s.C, s.H, s.W, s.K, s.P)


def cand_label(cand: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in cand.items()) or "default"


MXNET_FORMS = ("mxnet", "mxnet-generic")


def _refcounts(entries: list[tuple[Any, Any]]) -> list[int]:
    """The larger reference count of each (x, out) pair, as seen from here (compared with a fresh pair's)."""
    import sys

    return [max(sys.getrefcount(x), sys.getrefcount(out)) for x, out in entries]


def _host_ptr(a) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


def _dev_ptr(a) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.data.ptr)


class CourseLibrary:
    """The extern "C" entry points of a compiled course file (build.py's drivers), called with ctypes."""

    def __init__(self, lib: ctypes.CDLL, form: str):
        self.lib, self.form = lib, form
        self.stride = (ctypes.c_int(1),) if form == "minidnn-stride" else ()
        self.ignored: list[str] = []  # CUDA errors the file's calls returned and it ignored (raise_if_error)
        if form in MXNET_FORMS:
            lib.profconv_mxnet_check_failure.restype = ctypes.c_char_p

    def dims(self, s: ConvShape) -> tuple:
        return (*(ctypes.c_int(v) for v in (s.B, s.M, s.C, s.H, s.W, s.K)), *self.stride)

    def prolog(self, out_host, x_host, w_host, s: ConvShape) -> list[ctypes.c_void_p]:
        ptrs = [ctypes.c_void_p() for _ in range(3)]
        self.lib.profconv_course_prolog(_host_ptr(out_host), _host_ptr(x_host), _host_ptr(w_host),
                                        *(ctypes.byref(p) for p in ptrs), *self.dims(s))
        return ptrs

    def forward(self, ptrs: list[ctypes.c_void_p], s: ConvShape) -> None:
        self.lib.profconv_course_forward(*ptrs, *self.dims(s))

    def release(self, *host: Any) -> None:
        """Before a call: host buffers as the course hands them, registered by no one. The harness reuses
        its buffers from call to call where the course allocated new ones; a file that cudaHostRegisters them
        and never unregisters (legal there) would get "already mapped" on the next call and may exit on it."""
        for a in host:
            self.lib.profconv_host_release(_host_ptr(a))

    def epilog(self, out_host, ptrs: list[ctypes.c_void_p], s: ConvShape) -> None:
        self.lib.profconv_course_epilog(_host_ptr(out_host), *ptrs, *self.dims(s))

    def single(self, out_host, x_host, w_host, s: ConvShape) -> None:
        self.lib.profconv_course_forward(_host_ptr(out_host), _host_ptr(x_host), _host_ptr(w_host), *self.dims(s))

    def mxnet(self, y, x, w, s: ConvShape) -> None:
        self.lib.profconv_course_forward(_dev_ptr(y), _dev_ptr(x), _dev_ptr(w), *self.dims(s))

    def raise_if_error(self, phase: str = "call") -> None:
        """An error the file's own CUDA runtime recorded: one that leaves the context unusable (an illegal
        address, a launch failure) is raised; any other (a cudaHostRegister of memory already registered, an
        invalid argument the file never checked) is kept in `ignored`, as the course's program ignored it: the
        output checks decide. An MXNet CHECK that failed is raised (MXNet stopped the program there)."""
        err = self.lib.profconv_sync()
        if err:
            text = f"{self.lib.profconv_error_name(err).decode()}: {self.lib.profconv_error_string(err).decode()}"
            if is_sticky(KernelError(text)):
                raise KernelError(text)
            seen = f"{phase}: {text}"
            if seen not in self.ignored:
                self.ignored.append(seen)
        if self.form in MXNET_FORMS:
            failed = self.lib.profconv_mxnet_check_failure()
            if failed:
                raise KernelError(f"MXNet CHECK failed (MXNet stops the program here): {failed.decode(errors='replace')}")


class UserKernel:
    """One declared kernel: builds an op per candidate of its sweep, remembers the choice per layer shape."""

    def __init__(self, decl: Declaration, build_dir: Path | None = None):
        self.decl = decl
        self._build_dir = build_dir
        self._ops: dict[str, Op] = {}
        self.chosen: dict[tuple[int, ...], dict[str, Any]] = {}  # shape -> candidate
        self.sweep_times: dict[tuple[int, ...], dict[str, Any]] = {}  # shape -> {candidate: median_s or error}
        self.compile_argv: dict[str, list[str]] = {}  # candidate -> compiler flags used
        self._host_w: dict[int, tuple[Any, Any]] = {}
        self._default: dict[str, Any] | None = None
        self.include_map: dict[str, str] = {}  # the course image's absolute include paths -> the installed headers
        self._host_rings: dict[tuple, list[tuple[Any, Any]]] = {}

    @property
    def build_dir(self) -> Path:
        if self._build_dir is None:
            self._build_dir = Path(tempfile.mkdtemp(prefix=f"profconv-{self.decl.name}-"))
        return self._build_dir

    # -- what the record keeps
    def provenance(self) -> dict[str, Any]:
        d = self.decl
        return {"user": True, "contract": d.contract, "flavour": d.flavour, "path": str(d.source or d.where),
                "manifest": str(d.where) if d.where != d.source else None, "function": d.function,
                "source_sha256": d.source_sha256(), "defines": dict(d.defines), "sweep": dict(d.sweep),
                "compile": {"compiler": {"device": "nvrtc", "host": "nvcc", "course": "nvcc"}.get(d.contract, "python"),
                            "flags": self.compile_argv}}

    def params(self, s: ConvShape) -> dict[str, Any]:
        """The swept defines used for this shape (flat: the record's params)."""
        return dict(self.chosen.get(_key(s), self.default()))

    def sweep_report(self, s: ConvShape) -> dict[str, Any]:
        """Each candidate's median time for this shape, or why it was not chosen."""
        return dict(self.sweep_times.get(_key(s), {}))

    def default(self) -> dict[str, Any]:
        """The candidate used for a shape the sweep did not see: the defines' own values, else the first."""
        if self._default is None:
            cands = self.decl.candidates()
            self._default = next((c for c in cands if all(self.decl.defines.get(k) == v for k, v in c.items())),
                                 cands[0])
        return self._default

    # -- running
    def op(self, cp: Any, cand: dict[str, Any]) -> Op:
        label = cand_label(cand)
        if label not in self._ops:
            self._ops[label] = self._build(cp, cand)
        return self._ops[label]

    def launch(self, cp: Any, x, w, bias, out, s: ConvShape) -> Any:
        cand = self.chosen.get(_key(s)) or self.default()
        result = self.op(cp, cand)(x, w, bias, out, s)
        return out if result is None else result

    def choose(self, cp: Any, x, w, bias, s: ConvShape, check: Callable[[Any], str | None], make_out
               ) -> dict[str, Any]:
        """Sweep: each candidate checked (`check(result)` returns why it is wrong, or None) and timed
        (median of 3 after one warm-up); the fastest correct one is kept for this shape. Returns each
        candidate's median seconds or why it was not chosen ({} without a sweep)."""
        cands = self.decl.candidates()
        if len(cands) == 1:
            self.chosen[_key(s)] = cands[0]
            return {}
        times: dict[str, Any] = {}
        best: tuple[float, dict] | None = None
        for cand in cands:
            label = cand_label(cand)
            try:
                op = self.op(cp, cand)
                out = make_out()
                result = op(x, w, bias, out, s)
                cp.cuda.Device().synchronize()
                why = check(out if result is None else result)
                if why:
                    times[label] = f"wrong: {why}"
                    continue
                def call(op: Op = op, out: Any = out) -> None:
                    op(x, w, bias, out, s)

                t = gpu.time_gpu(cp, call, repeat=3, warmup=1).median
            except Exception as exc:  # a candidate that does not compile or launch is not chosen
                times[label] = f"error: {first_line(exc)}"
                if is_sticky(exc):
                    raise
                continue
            times[label] = t
            if best is None or t < best[0]:
                best = (t, cand)
        self.sweep_times[_key(s)] = times
        if best is None:
            raise KernelError("no candidate of the sweep was correct: " +
                              "; ".join(f"{k}: {v}" for k, v in times.items()))
        self.chosen[_key(s)] = best[1]
        return times

    def _defines(self, cand: dict[str, Any]) -> dict[str, Any]:
        return {**self.decl.defines, **cand}

    def _build(self, cp: Any, cand: dict[str, Any]) -> Op:
        c = self.decl.contract
        if c == "device":
            return self._build_device(cp, cand)
        if c == "host":
            return self._build_host(cp, cand)
        if c == "course":
            return self._build_course(cp, cand)
        return self._build_python(cp)

    def _check_layer(self, s: ConvShape, bias) -> None:
        args = set(POINTERS.get(a, a) for a in self.decl.args)
        if self.decl.contract in ("device", "host"):
            if s.P and "pad" not in args:
                raise KernelError(f"the layer pads by {s.P} and the kernel takes no `pad` argument")
            if bias is not None and "bias" not in args:
                raise KernelError("the layer has a bias and the kernel takes no `bias` argument")
        if self.decl.contract == "course":
            if s.P:
                raise KernelError(f"the course's functions take no padding and this layer pads by {s.P}")
            if bias is not None:
                raise KernelError("the course's functions take no bias and this layer has one")

    def _argument_values(self, cp: Any, cand: dict, x, w, bias, out, s: ConvShape, pointer: Callable[[Any], Any],
                         integer: Callable[[int], Any]) -> list[Any]:
        env = shape_env(s.B, s.M, s.C, s.H, s.W, s.K, s.P, self._defines(cand))
        arrays = {"x": x, "w": w, "bias": gpu.bias_or_zeros(cp, bias, s.M, w.dtype), "y": out}
        vals = []
        for a in self.decl.args:
            if a in POINTERS:
                vals.append(pointer(arrays[POINTERS[a]]))
            else:
                vals.append(integer(int(env[a])))
        return vals

    def _build_device(self, cp: Any, cand: dict[str, Any]) -> Op:
        d = self.decl
        assert d.source is not None and d.function is not None
        defines = self._defines(cand)
        options = ("-std=c++17", "-lineinfo", f"-I{d.source.parent}",
                   *(f"-D{k}={v}" for k, v in defines.items()), *d.options)
        self.compile_argv[cand_label(cand)] = list(options)
        code = gpu.kernel_source(d.source.name) if d.builtin else d.source.read_text()
        # name expressions find C++ (mangled) kernels; an extern "C" kernel is found by its own name
        exprs = None if 'extern "C"' in code else [d.function]
        mod = cp.RawModule(code=code, options=options, name_expressions=exprs)
        try:
            fn = mod.get_function(d.function)
        except cp.cuda.compiler.CompileException as exc:
            raise build.CompileError(build.nvrtc_message(str(exc), d.source)) from None
        except Exception as exc:
            raise build.CompileError(f"{d.source}: {first_line(exc)}") from None
        gpu.record_compiled(d.source.name if d.builtin else str(d.source), options, code)  # provenance
        plans: dict[tuple[int, ...], tuple] = {}  # shape -> grid, block, shared bytes, argument slots

        def plan(s: ConvShape) -> tuple:
            env = shape_env(s.B, s.M, s.C, s.H, s.W, s.K, s.P, defines)
            grid = tuple(evaluate(e, env) for e in d.grid)
            block = tuple(evaluate(e, env) for e in d.block)
            smem = evaluate(d.shared_bytes, env)
            if smem > 48 * 1024:
                fn.max_dynamic_shared_size_bytes = smem
            slots = tuple(POINTERS[a] if a in POINTERS else np.int32(env[a]) for a in d.args)
            return grid, block, smem, slots

        def op(x, w, bias, out, s: ConvShape):
            key = _key(s)
            if key not in plans:
                self._check_layer(s, bias)
                plans[key] = plan(s)
            grid, block, smem, slots = plans[key]
            arrays = {"x": x, "w": w, "bias": bias if bias is not None else gpu.bias_or_zeros(cp, None, s.M, w.dtype),
                      "y": out}
            fn(grid, block, tuple(arrays[v] if isinstance(v, str) else v for v in slots), shared_mem=smem)
            return out

        return op

    def check_errors(self) -> None:
        """Raise the CUDA error a host or course library recorded in its own runtime (launch errors)."""
        for op in self._ops.values():
            lib = getattr(op, "lib", None)
            if lib is not None:
                self._raise_if_error(lib)

    def _load(self, lib_path: Path) -> ctypes.CDLL:
        lib = ctypes.CDLL(str(lib_path))
        lib.profconv_sync.restype = ctypes.c_int
        lib.profconv_error_name.restype = ctypes.c_char_p
        lib.profconv_error_string.restype = ctypes.c_char_p
        return lib

    @staticmethod
    def _raise_if_error(lib: ctypes.CDLL) -> None:
        err = lib.profconv_sync()
        if err:
            raise KernelError(f"{lib.profconv_error_name(err).decode()}: {lib.profconv_error_string(err).decode()}")

    def _arch(self, cp: Any) -> str:
        major, minor = cp.cuda.Device().compute_capability[:-1], cp.cuda.Device().compute_capability[-1]
        return f"sm_{major}{minor}"

    def _build_host(self, cp: Any, cand: dict[str, Any]) -> Op:
        d = self.decl
        assert d.source is not None and d.function is not None
        tag = str(len(self._ops))
        built = build.build_host(d.source, self.build_dir, self._arch(cp), self._defines(cand), d.options, tag)
        self.compile_argv[cand_label(cand)] = list(built.argv[1:])
        lib = self._load(built.path)
        fn = getattr(lib, d.function)
        fn.restype = None

        def op(x, w, bias, out, s: ConvShape):
            self._check_layer(s, bias)
            fn(*self._argument_values(cp, cand, x, w, bias, out, s, lambda a: ctypes.c_void_p(a.data.ptr), ctypes.c_int))
            return out

        op.lib = lib  # type: ignore[attr-defined]
        return op

    def compile_only(self, arch: str) -> None:
        """Build the default candidate's library as the child will (same folder, same command: the child finds
        it built), without loading it: `isolate.prebuild` builds several kernels at once before they run."""
        d, cand = self.decl, self.default()
        if d.contract == "course" and d.source is not None and d.flavour is not None:
            build.build_course(d.source, d.flavour, self.build_dir / cand_label(cand), arch, self._defines(cand),
                               d.options)
        elif d.contract == "host" and d.source is not None:
            build.build_host(d.source, self.build_dir, arch, self._defines(cand), d.options, "0")

    def _build_course(self, cp: Any, cand: dict[str, Any]) -> Op:
        d = self.decl
        assert d.source is not None and d.flavour is not None
        built = build.build_course(d.source, d.flavour, self.build_dir / cand_label(cand), self._arch(cp),
                                   self._defines(cand), d.options)
        self.compile_argv[cand_label(cand)] = list(built.argv[1:])
        self.include_map.update(built.include_map)
        course = CourseLibrary(self._load(built.path), d.flavour)

        def op(x, w, bias, out, s: ConvShape):  # one whole call, as the course's program makes it
            ph = self._course_phases(cp, course, x, w, bias, out, s)
            if ph.before is not None:
                ph.before()
            state = ph.prolog() if ph.prolog is not None else None
            ph.check(calls.PROLOG)
            ph.forward(state)
            ph.check(calls.FORWARD)
            if ph.epilog is not None:
                ph.epilog(state)
                ph.check(calls.EPILOG)
            return out

        op.lib = course.lib  # type: ignore[attr-defined]
        op.course = course  # type: ignore[attr-defined]
        return op

    def phases(self, cp: Any, x, w, bias, out, s: ConvShape) -> calls.Phases:
        """One call of this kernel split as the course's program makes it (prolog, conv_forward_gpu, epilog
        for mini-dnn; `forward` alone for MXNet and the single-call form; the launch for our contracts)."""
        op = self.op(cp, self.chosen.get(_key(s)) or self.default())
        course = getattr(op, "course", None)
        if course is None:
            return calls.Phases(forward=lambda _: self.launch(cp, x, w, bias, out, s), check=lambda phase: self.check_errors())
        return self._course_phases(cp, course, x, w, bias, out, s)

    def _course_phases(self, cp: Any, course: CourseLibrary, x, w, bias, out, s: ConvShape) -> calls.Phases:
        self._check_layer(s, bias)
        if course.form in MXNET_FORMS:
            return calls.Phases(forward=lambda _: course.mxnet(out, x, w, s), check=course.raise_if_error)
        w_host = self._weights_on_host(cp, w)
        fresh_memory = lambda: course.release(out, x, w_host)  # noqa: E731
        if course.form == "minidnn-single":
            return calls.Phases(forward=lambda _: course.single(out, x, w_host, s), check=course.raise_if_error,
                                before=fresh_memory)
        # the pointers are the student's business: a file with its filters in constant memory leaves
        # device_k unset, one that streams from host memory passes host pointers on
        return calls.Phases(prolog=lambda: course.prolog(out, x, w_host, s), forward=lambda st: course.forward(st, s),
                            epilog=lambda st: course.epilog(out, st, s), check=course.raise_if_error,
                            before=fresh_memory)

    def operands(self, cp: Any, a, w, bias, s: ConvShape) -> tuple[Any, Any, Any, Any]:
        """(x, w, bias, out) as the course's program hands them to this form: mini-dnn takes pageable host
        memory (a student's prolog may cudaHostRegister it) and an output it overwrites (poisoned with NaN
        here); MXNet takes device tensors and a zeroed y (the framework zeroes it: atomicAdd into y is
        right); our own contracts take device arrays and a NaN-poisoned output."""
        dtype = np.float16 if self.decl.precision == "fp16" else np.float32
        shape = (s.B, s.M, s.Ho, s.Wo)
        if self.decl.contract == "course" and self.decl.flavour not in MXNET_FORMS:
            x_host, out = self._host_buffers(tuple(a.shape), shape, dtype)
            if hasattr(a, "get") and a.dtype == x_host.dtype and a.flags.c_contiguous:
                a.get(out=x_host)  # straight into the course's host buffer: no temporary of the whole batch
            else:
                x_host[...] = a.get() if hasattr(a, "get") else a
            hostcopy.fill(out, np.nan)
            return x_host, w.astype(dtype), bias, out
        out = cp.zeros(shape, dtype=dtype) if self.decl.flavour in MXNET_FORMS else cp.full(shape, np.nan, dtype=dtype)
        return cp.ascontiguousarray(a, dtype=dtype), w.astype(dtype), None if bias is None else bias.astype(dtype), out

    def ignored_errors(self) -> list[str]:
        """The CUDA errors the course file's calls returned and it ignored since the last time asked."""
        out = []
        for op in self._ops.values():
            course = getattr(op, "course", None)
            if course is not None:
                out += course.ignored
                course.ignored = []
        return out

    HOST_RING = 3

    def _host_buffers(self, x_shape: tuple, out_shape: tuple, dtype) -> tuple[Any, Any]:
        """Pageable host buffers for one call, from a pool per shape kept for the whole process: the course's
        program allocated each layer's buffers once and never freed them during the run, so a file may
        cudaHostRegister them and never unregister; memory freed and mapped again at the same address would keep
        a stale registration. A call gets the oldest buffers nobody holds any more (never those of the call just
        before: at least three in turn); new ones when all are held (bench prepares one per input set)."""
        key = (x_shape, out_shape, np.dtype(dtype).str)
        ring = self._host_rings.setdefault(key, [])
        base = _refcounts([(np.empty(1), np.empty(1))])[0]  # what an entry nobody else holds counts
        free = [i for i, counts in enumerate(_refcounts(ring[:-1])) if counts <= base]
        if len(ring) < self.HOST_RING or not free:
            x, out = np.empty(x_shape, dtype=dtype), np.empty(out_shape, dtype=dtype)
            hostcopy.fill(x, 0)  # new pages faulted in by several threads, not by the copy that writes them
            ring.append((x, out))
        else:
            ring.append(ring.pop(free[0]))
        return ring[-1]

    @property
    def y_initial(self) -> str:
        return "zero" if self.decl.flavour in MXNET_FORMS else "nan"

    def _weights_on_host(self, cp: Any, w) -> Any:
        key = id(w)
        if key not in self._host_w or self._host_w[key][0] is not w:
            self._host_w[key] = (w, np.ascontiguousarray(cp.asnumpy(w)))
        return self._host_w[key][1]

    def _build_python(self, cp: Any) -> Op:
        d = self.decl
        if d.module:
            mod = importlib.import_module(d.module)
        else:
            assert d.source is not None
            spec = importlib.util.spec_from_file_location(f"profconv_user_{d.name.replace('-', '_')}", d.source)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.path.insert(0, str(d.source.parent))
            try:
                spec.loader.exec_module(mod)
            finally:
                sys.path.remove(str(d.source.parent))
        fn = getattr(mod, d.function or "launch", None)
        if not callable(fn):
            raise build.CompileError(f"{d.source or d.module}: no function {d.function!r}")
        takes_cp = next(iter(inspect.signature(fn).parameters), None) == "cp"
        self.compile_argv["default"] = []

        def op(x, w, bias, out, s: ConvShape):
            return fn(cp, x, w, bias, out, s) if takes_cp else fn(x, w, bias, out, s)

        return op


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    if isinstance(exc, build.CompileError):
        return text
    line = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


def is_sticky(exc: BaseException) -> bool:
    """A CUDA error that leaves the context unusable (illegal address, launch failure, trap)."""
    text = f"{type(exc).__name__} {exc}"
    return any(s in text for s in ("IllegalAddress", "illegal memory access", "LaunchFailure", "unspecified launch failure",
                                   "IllegalInstruction", "MisalignedAddress", "HardwareStackError", "cudaErrorAssert",
                                   "device-side assert", "LaunchTimeout"))


def user_variant(decl: Declaration, kernel: UserKernel | None = None) -> tuple[Variant, UserKernel]:
    """The runner's Variant for a user's kernel (launch, operands and params go through the UserKernel)."""
    k = kernel or UserKernel(decl)
    host_io = decl.contract == "course" and decl.flavour not in MXNET_FORMS
    contract = f"{decl.contract} ({decl.flavour})" if decl.flavour else decl.contract
    v = Variant(name=decl.name, description=decl.description or f"user kernel, {contract} contract",
                technique=decl.technique or f"user kernel ({contract})", precision=decl.precision,
                tolerance=decl.tolerance, device="gpu", source=str(decl.source or decl.where), launch=k.launch,
                params=k.params, host_io=host_io, baseline="cudnn" if host_io else None,
                arithmetic="fp16" if decl.precision == "fp16" else "fp32", user=True, provenance=k.provenance(),
                operands=k.operands if decl.contract == "course" else None,
                tune=k.choose if decl.sweep and not host_io else None)
    return v, k


def sweep_text(report: dict[str, Any], chosen: dict[str, Any]) -> str:
    """One line on a sweep: 'TILE=16 chosen of 3: TILE=8 1.234 ms, TILE=16 0.987 ms, TILE=32 wrong: ...'."""
    won = cand_label(chosen)
    parts = [f"{k} {v * 1e3:.3f} ms" if isinstance(v, float) else f"{k} {v}" for k, v in report.items()]
    return f"{won} chosen of {len(report)}: " + ", ".join(parts)
