"""User kernels without a GPU: manifests, contract detection, the built-in declarations, nvcc builds,
the child-process outcomes, compute-sanitizer reports, scaffolding and the CLI's error paths."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from profconv.run.models import ConvShape
from profconv.run.user import build, checks, isolate, manifest, scaffold
from profconv.run.user.manifest import ManifestError
from profconv.run.variants import VARIANTS, builtin_declarations, get_variants

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
BAD = ROOT / "tests" / "data" / "kernels" / "bad"
COURSE = ROOT / "tests" / "data" / "kernels" / "course"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

DEVICE_TOML = """name = "k"
source = "k.cu"
args = ["x", "w", "y", "B", "M", "C", "H", "W", "K"]
grid = ["ceil(W_out / TILE)", "M", "B"]
block = ["TILE"]
[defines]
TILE = 16
"""
KERNEL = ('extern "C" __global__ void conv(const float* x, const float* w, float* y, int B, int M, int C, int H, int W, '
          'int K) {}\n')


def write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


# ------------------------------------------------------------------ manifests


def test_folder_manifest_is_read_and_validated(tmp_path):
    d = manifest.load(write(tmp_path, {"profconv.toml": DEVICE_TOML, "k.cu": KERNEL}))
    assert (d.name, d.contract, d.function, d.args[:3]) == ("k", "device", "conv", ("x", "w", "y"))
    assert d.grid == ("ceil(W_out / TILE)", "M", "B") and d.block == ("TILE",) and d.defines == {"TILE": 16}
    assert d.source == (tmp_path / "k.cu").resolve() and d.where == tmp_path / "profconv.toml"
    h = hashlib.sha256((tmp_path / "k.cu").read_bytes() + (tmp_path / "profconv.toml").read_bytes()).hexdigest()
    assert d.source_sha256() == h


def test_header_manifest_in_cu_and_py_files():
    d = manifest.load(EXAMPLES / "device-tiled" / "conv_tiled.cu")
    assert (d.name, d.contract, d.function, d.where) == ("tiled", "device", "conv_tiled", d.source)
    assert d.sweep == {"TILE": [8, 16, 32]} and d.candidates() == [{"TILE": 8}, {"TILE": 16}, {"TILE": 32}]
    p = manifest.load(EXAMPLES / "python-cupy" / "conv_cupy.py")
    assert (p.name, p.contract, p.function, p.description) == ("cupy-rawkernel", "python", "launch",
                                                                "a CuPy RawKernel, one thread per output")


def test_sibling_toml_and_reload_path(tmp_path):
    write(tmp_path, {"k.cu": KERNEL, "k.toml": DEVICE_TOML.replace('source = "k.cu"\n', "")})
    d = manifest.load(tmp_path / "k.cu")
    assert d.where == tmp_path / "k.toml" and manifest.reload_path(d) == tmp_path / "k.cu"
    assert manifest.load(manifest.reload_path(d)) == d


@pytest.mark.parametrize("table, message", [
    ('bogus = 1\n', "unknown key(s) bogus"),
    ('args = ["x", "q"]\ngrid = ["1"]\nblock = [1]\n', "argument 'q' is not one of"),
    ('args = ["x"]\ngrid = ["B + nope"]\nblock = [1]\n', "unknown name 'nope'"),
    ('args = ["x"]\ngrid = ["__import__(1)"]\nblock = [1]\n', "only ceil(), min() and max() may be called"),
    ('args = ["x"]\nblock = [1]\n', "needs `grid` and `block`"),
    ('args = ["x"]\ngrid = [1]\nblock = [1]\nprecision = "fp64"\n', "precision 'fp64' is not one of fp32, fp16"),
    ('args = ["x"]\ngrid = [1]\nblock = [1]\ntolerance = 2\n', "`tolerance` must be a number between 0 and 1"),
    ('args = ["x"]\ngrid = [1]\nblock = [1]\n[sweep]\nT = []\n', "[sweep] holds NAME = [value, value, ...]"),
    ('args = ["x"]\ngrid = [1]\nblock = [1]\nfunction = "missing"\n', "function 'missing' is not in k.cu"),
    ('name = "k"\n[defines\n', "not valid TOML"),
])
def test_bad_manifests_name_the_file_and_the_problem(tmp_path, table, message):
    write(tmp_path, {"k.cu": KERNEL, "profconv.toml": 'source = "k.cu"\n' + table})
    with pytest.raises(ManifestError) as err:
        manifest.load(tmp_path)
    assert message in str(err.value) and str(tmp_path / "profconv.toml") in str(err.value)


def test_missing_and_ambiguous_kernels(tmp_path):
    with pytest.raises(ManifestError, match="no such file or folder"):
        manifest.load(tmp_path / "nope.cu")
    write(tmp_path, {"a.cu": KERNEL, "b.cu": KERNEL})
    with pytest.raises(ManifestError, match=r"kernel file is ambiguous \(.cu/.cuh/.py files: a.cu, b.cu\)"):
        manifest.load(tmp_path)
    with pytest.raises(ManifestError, match="a kernel is a .cu, .cuh or .py file"):
        manifest.load(write(tmp_path, {"notes.txt": "x"}) / "notes.txt")
    with pytest.raises(ManifestError, match="--contract 'cuda' is not one of"):
        manifest.load(tmp_path / "a.cu", "cuda")


def test_device_kernel_without_launch_declaration_says_what_to_add(tmp_path):
    write(tmp_path, {"k.cu": KERNEL})
    with pytest.raises(ManifestError, match="say the kernel's arguments in order"):
        manifest.load(tmp_path / "k.cu")


def test_contract_detection():
    assert manifest.load(EXAMPLES / "host-constant").contract == "host"
    c = manifest.load(EXAMPLES / "course-minidnn")
    assert (c.contract, c.flavour, c.name) == ("course", "minidnn-stride", "course-minidnn")
    m = manifest.load(EXAMPLES / "course-mxnet")
    assert (m.contract, m.flavour) == ("course", "mxnet")
    assert manifest.detect_contract(Path("k.cu"), 'extern "C" __global__ void f() {}', {}) == "device"
    assert manifest.detect_contract(Path("k.cu"), 'extern "C" void f(float* x) {}', {}) == "host"
    assert manifest.detect_contract(Path("k.py"), "", {}) == "python"
    with pytest.raises(ManifestError, match="no __global__ kernel"):
        manifest.detect_contract(Path("k.cu"), "int main() {}", {})


@pytest.mark.parametrize("params, flavour", [
    ("float *y, const float *x, const float *k, const int B, const int M, const int C, const int H, const int W, const int K",
     "minidnn"),
    ("float *device_output, const float *device_input, const float *device_mask, const int Batch, const int Map_out, "
     "const int Channel, const int Height, const int Width, const int K, const int S", "minidnn-stride"),
    ("float* y, const float* x, const float* k,  // unused comment, with commas\n const int B0, const int M, "
     "const int C, const int H, const int W, const int K", "minidnn"),
])
def test_course_flavour_from_conv_forward_gpu_parameters(params, flavour):
    text = (f"void GPUInterface::conv_forward_gpu_prolog(const float *y) {{}}\n"
            f"__host__ void GPUInterface::conv_forward_gpu({params}) {{}}")
    assert manifest.course_flavour(Path("new-forward.cu"), text) == flavour


def test_course_flavour_of_the_single_call_form():
    text = ("__host__ void GPUInterface::conv_forward_gpu(float *host_y, const float *host_x, const float *host_k, "
            "const int B, const int M, const int C, const int H, const int W, const int K) {}")
    assert manifest.course_flavour(Path("new-forward.cu"), text) == "minidnn-single"
    assert manifest.load(COURSE / "minidnn-single").flavour == "minidnn-single"
    assert "conv_forward_gpu(pc_hy, pc_hx, pc_hk," in build.minidnn_driver(False, single=True)


def test_course_flavour_refuses_other_signatures():
    with pytest.raises(ManifestError, match="takes 4 parameters"):
        manifest.course_flavour(Path("n.cu"), "void GPUInterface::conv_forward_gpu(float *y, float *x, float *k, int B) {}")


def test_expressions():
    env = manifest.shape_env(10, 6, 1, 64, 64, 5, 0, {"TILE": 16})
    assert (env["H_out"], env["W_out"]) == (60, 60)
    assert manifest.evaluate("ceil(W_out / TILE) * ceil(H_out / TILE)", env) == 16
    assert manifest.evaluate("min(B * M * H_out * W_out // 256, 65535)", env) == 843
    assert manifest.evaluate("4 * ((TILE + K - 1) * (TILE + K - 1) + K * K)", {"TILE": 16, "K": 5}) == 4 * (400 + 25)
    with pytest.raises(ValueError, match="is not a whole number"):
        manifest.evaluate("W_out / TILE", env)
    with pytest.raises(ValueError, match="only numbers, names"):
        manifest.check_expression("[1, 2]", set(env))


# ------------------------------------------------------------------ the built-in ladder


def test_builtin_variants_are_declarations_in_ladder_order():
    from profconv.run import peers

    assert [v.name for v in VARIANTS] == ["cpu", "naive", "shared", "constant", "unroll-gemm", "fused", "tuned", "fp16",
                                          "tf32-wmma", "tensorcore", "tensorcore-tf32", "tensorcore-3xtf32", "e2e",
                                          "streams", *(p.name for p in peers.PEERS)]
    decls = {d.name: d for d in builtin_declarations()}
    assert decls["naive"].contract == "device" and decls["naive"].grid == ("min(ceil(B * M * H_out * W_out / 256), 2147483647)",)
    assert decls["shared"].contract == "python" and decls["shared"].module == "profconv.run.variants"
    by = {v.name: v for v in VARIANTS}
    assert (by["fp16"].precision, by["fp16"].tolerance, by["fp16"].arithmetic, by["fp16"].reference) == (
        "fp16", 1e-2, "fp16", "cudnn-fp16")
    assert (by["streams"].host_io, by["streams"].reference) == (True, "e2e")
    assert by["cpu"].dtype == "float64" and by["cudnn"].device == "cudnn" and by["tuned"].params is not None
    for d in decls.values():
        for name in (d.source.name if d.source else None, *d.sources):
            assert name is None or (ROOT / "kernels" / name).is_file(), name


def test_variant_none_selects_no_builtin():
    assert get_variants(["none"]) == []
    assert [v.name for v in get_variants(["cudnn"])] == ["cudnn"]


# ------------------------------------------------------------------ builds


def test_nvcc_argv_is_exact():
    argv = build.nvcc_argv("nvcc", [Path("a.cu"), Path("h.cu")], Path("lib.so"), "sm_90", [Path("inc")], {"TILE": 8},
                           ("--use_fast_math",))
    assert argv == ["nvcc", "-shared", "-Xcompiler", "-fPIC", "-O3", "-lineinfo", "-std=c++17", "-arch=sm_90", "-Iinc",
                    "-DTILE=8", "--use_fast_math", "-o", "lib.so", "a.cu", "h.cu"]


def test_course_header_declares_the_students_own_parameter_lists():
    text = ("__host__ void GPUInterface::conv_forward_gpu_prolog(float* host_y, const float* host_x, /* k */ const float* k,"
            " float** a, float** b, float** c, const int B, const int M, const int C, const int H, const int W, const int K)"
            " {}\n__host__ void GPUInterface::get_device_properties() {}\n")
    methods = build.course_methods(text)
    assert methods["conv_forward_gpu_prolog"].startswith("float* host_y, const float* host_x, const float* k,")
    header = build.course_header(methods)
    assert "    void get_device_properties();" in header and "class GPUInterface {" in header
    assert "int pc_s" in build.minidnn_driver(True) and "pc_s" not in build.minidnn_driver(False)


def test_nvcc_missing_is_one_clear_error(monkeypatch):
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(build, "Path", lambda *a: Path("/nonexistent", *a[1:]) if a and a[0] == "/usr/local/cuda" else Path(*a))
    with pytest.raises(build.NvccMissing, match="compiled with nvcc, which is not on PATH"):
        build.find_nvcc()


@needs_nvcc
@pytest.mark.parametrize("folder, flavour", [("course-minidnn", "minidnn-stride"), ("course-mxnet", "mxnet")])
def test_course_examples_build_unchanged(tmp_path, folder, flavour):
    d = manifest.load(EXAMPLES / folder)
    lib = build.build_course(d.source, flavour, tmp_path, "sm_90", {}, ())
    assert lib.path.is_file() and lib.argv[-1].endswith("helpers.cu")


@needs_nvcc
@pytest.mark.parametrize("folder", ["minidnn-old", "minidnn-const", "mxnet-macros", "minidnn-single"])
def test_course_test_files_build(tmp_path, folder):
    d = manifest.load(COURSE / folder)
    assert d.contract == "course"
    assert build.build_course(d.source, d.flavour, tmp_path, "sm_90", {}, ()).path.is_file()


@needs_nvcc
def test_compile_errors_name_the_users_file_and_line(tmp_path):
    src = write(tmp_path, {"new-forward.cu": (COURSE / "minidnn-old" / "new-forward.cu").read_text().replace(
        "float acc = 0.0f;", "float acc = undefined_value;")}) / "new-forward.cu"
    with pytest.raises(build.CompileError) as err:
        build.build_course(src, "minidnn", tmp_path / "build", "sm_90", {}, ())
    line = next(i for i, ln in enumerate(src.read_text().splitlines(), 1) if "undefined_value" in ln)
    assert str(err.value).splitlines()[0] == f'{src}({line}): error: identifier "undefined_value" is undefined'
    assert "detected in the compilation" not in str(err.value)


@needs_nvcc
def test_host_example_builds_with_its_options(tmp_path):
    d = manifest.load(EXAMPLES / "host-constant")
    lib = build.build_host(d.source, tmp_path, "sm_90", {}, d.options)
    assert "--use_fast_math" in lib.argv and lib.path.is_file()


def test_nvrtc_log_is_rewritten_to_the_users_file():
    log = ('/tmp/tmpab/1f2e.cubin.cu(9): error: identifier "s" is undefined\n\n'
           '1 error detected in the compilation of "/tmp/tmpab/1f2e.cubin.cu".')
    assert build.nvrtc_message(log, Path("/home/me/k.cu")) == '/home/me/k.cu(9): error: identifier "s" is undefined'


# ------------------------------------------------------------------ isolation outcomes and checks


JOB = isolate.KernelJob(kernel="k.cu", contract="device", model="ece408", images=100, repeat=5, warmup=2, timeout=30)
DECL = manifest.load(EXAMPLES / "device-tiled" / "conv_tiled.cu")


def test_timeout_keeps_finished_layers_and_fails_the_hung_one():
    partial = {"images": 100, "variant": "tiled", "technique": "t", "precision": "fp32",
               "conv": [{"layer": "conv1", "shape": "M=6", "status": "ok",
                         "op_time": {"median_s": 1e-4, "min_s": 1e-4, "max_s": 1e-4}}]}
    log = "profconv-progress: ece408: reference pass\nprofconv-progress: ece408/tiled/conv2: timing\n"
    res = isolate.outcome(JOB, DECL, {"user": True}, None, log, partial)
    assert res.status == "failed"
    assert res.error == "timed out after 30 s during ece408/tiled/conv2: timing (a hang, or slower than --kernel-timeout)"
    assert [(c.layer, c.status) for c in res.conv] == [("conv1", "ok"), ("conv2", "failed")]
    assert [(lf.layer, lf.error) for lf in res.facts.layers] == [("conv2", res.error)]  # the facts say where it hung
    assert res.facts.legacy_status == "failed" and res.facts.form.contract == DECL.contract


def test_crash_and_exit_outcomes():
    res = isolate.outcome(JOB, DECL, {"user": True}, -11, "profconv-progress: ece408/tiled/conv1: check\n", None)
    assert res.error == "crashed (SIGSEGV) during ece408/tiled/conv1: check" and res.user == {"user": True}
    log = "Traceback (most recent call last):\n  File x\nMemoryError: out of host memory\n"
    res = isolate.outcome(JOB, DECL, {}, 1, log, None)
    assert res.error == "the child process failed (exit 1): MemoryError: out of host memory"
    ok = isolate.outcome(JOB, DECL, {}, 0, "", {"images": 100, "variant": "tiled", "technique": "t", "precision": "fp32",
                                                "status": "ok", "conv": []})
    assert ok.status == "ok"


def test_a_hang_or_a_crash_is_judged_on_the_layer_it_happened_on():
    """What `profconv run` prints for them once judged (tests/test_user_kernels_gpu.py's broken kernels, whose
    hang read 'conv1: timed out after 25 s during ece408/hang/conv1: the course's call ... [profconv.ran]' on
    an H200 in window s8d)."""
    from profconv.judge.assemble import apply

    hung = isolate.outcome(JOB, DECL, {"user": True}, None, "profconv-progress: ece408/tiled/conv1: the course's call\n",
                           None)
    crashed = isolate.outcome(JOB, DECL, {"user": True}, -11, "profconv-progress: ece408/tiled/conv1: check\n", None)
    for res in (hung, crashed):
        apply(res, model="ece408")
    assert hung.error == ("conv1: timed out after 30 s during ece408/tiled/conv1: the course's call (a hang, or "
                          "slower than --kernel-timeout) [profconv.ran]")
    assert crashed.error == "conv1: crashed (SIGSEGV) during ece408/tiled/conv1: check [profconv.ran]"
    assert hung.status == crashed.status == "failed"


MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at conv+0x1b0 in /tmp/tmpx/abc.cubin.cu:11
=========     by thread (3,0,0) in block (0,0,0)
=========     Address 0x7f00 is out of bounds
=========
========= Invalid __global__ read of size 4 bytes
=========     at conv+0x1b0 in /tmp/tmpx/abc.cubin.cu:11
=========
========= ERROR SUMMARY: 2 errors
"""
RACECHECK = """========= Error: Race reported between Write access at conv+0x90 in /tmp/x/k.cu:20
=========     and Read access at conv+0xa0 in /tmp/x/k.cu:24 [128 hazards]
=========
========= Warning: Race reported between Write access at 0x90 in /tmp/kern.cu:30:conv(float const*, int)
=========     and Write access at 0xa0 in /tmp/kern.cu:31:conv(float const*, int) [4 hazards]
=========
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
"""


def test_sanitizer_reports_are_parsed_with_source_lines():
    m = isolate.parse_sanitizer(MEMCHECK, "/home/me/k.cu")
    assert m == {"errors": 2, "warnings": 0, "complete": True,
                 "findings": ["Invalid __global__ read of size 4 bytes at /home/me/k.cu:11 (conv)"]}
    r = isolate.parse_sanitizer(RACECHECK, "/w/k.cu")
    assert (r["errors"], r["warnings"]) == (1, 1)
    assert r["findings"] == [
        "Error: Race reported between Write access at /w/k.cu:20 (conv) and Read access at /w/k.cu:24 (conv) "
        "[128 hazards]",
        "Warning: Race reported between Write access at /w/k.cu:30 (conv) and Write access at /w/k.cu:31 (conv) "
        "[4 hazards]"]
    # a file that is not the user's (a generated driver, a shim) keeps its own name
    assert isolate.parse_sanitizer(MEMCHECK.replace("abc.cubin.cu", "helpers.cu"), "/home/me/k.cu")["findings"] == [
        "Invalid __global__ read of size 4 bytes at helpers.cu:11 (conv)"]
    assert isolate.parse_sanitizer("", None) == {"errors": 0, "warnings": 0, "findings": [], "complete": False}
    assert isolate.sanitizer_argv("cs", "memcheck", ["py", "-m", "w"]) == [
        "cs", "--tool", "memcheck", "--print-limit", "20", "--show-backtrace", "device", "--leak-check", "no", "py", "-m", "w"]
    assert isolate.sanitizer_argv("cs", "racecheck", ["py"])[-3:] == ["--racecheck-report", "analysis", "py"]


def test_sanitizer_verdict_fails_errors_and_notes_warnings():
    mem = isolate.parse_sanitizer(MEMCHECK, "/k.cu")
    race = isolate.parse_sanitizer(RACECHECK, "/k.cu")
    failure, notes = isolate.sanitizer_verdict({"memcheck": mem, "racecheck": race})
    assert failure == ("compute-sanitizer memcheck: 2 error(s): Invalid __global__ read of size 4 bytes at /k.cu:11 "
                       "(conv); compute-sanitizer racecheck: 1 hazard(s): Error: Race reported between Write access "
                       "at /k.cu:20 (conv) and Read access at /k.cu:24 (conv) [128 hazards]")
    assert notes == []
    only_warning = isolate.parse_sanitizer(RACECHECK.split("=========\n", 1)[1].replace("(1 error, 1 warning)",
                                                                                     "(0 errors, 1 warning)"), "/k.cu")
    clean = isolate.parse_sanitizer("========= ERROR SUMMARY: 0 errors\n", "/k.cu")
    failure, notes = isolate.sanitizer_verdict({"memcheck": clean, "racecheck": only_warning})
    assert failure is None
    assert notes == ["compute-sanitizer racecheck: 1 warning(s): Warning: Race reported between Write access at "
                     "/k.cu:30 (conv) and Write access at /k.cu:31 (conv) [4 hazards]"]
    cut = dict(clean, complete=False, run_error="timed out after 100 s")
    assert isolate.sanitizer_verdict({"memcheck": cut}) == (
        None, ["compute-sanitizer memcheck did not finish: timed out after 100 s"])
    assert isolate.sanitizer_verdict({"error": "compute-sanitizer not found"}) == (
        None, ["--sanitize: compute-sanitizer not found"])


def test_edge_shapes_and_floor():
    s = ConvShape(1000, 16, 6, 30, 30, 5)
    assert checks.edge_shapes(s) == [ConvShape(1, 16, 6, 30, 30, 5), ConvShape(3, 16, 6, 31, 33, 5)]
    odd = checks.edge_shapes(ConvShape(10, 4, 1, 29, 27, 7, 1))[1]
    assert (odd.H % 2, odd.W % 2) == (1, 1)
    from profconv.hardware import peak_for

    floor, bound = checks.floor_seconds(ConvShape(10000, 6, 1, 64, 64, 5), 4, peak_for("NVIDIA H200"), 60 << 20, "fp32")
    assert bound == "memory" and floor == pytest.approx(4 * (10000 * 4096 + 150 + 10000 * 6 * 3600) / 4.8e12)
    floor, bound = checks.floor_seconds(ConvShape(10, 6, 1, 64, 64, 5), 4, peak_for("NVIDIA H200"), 60 << 20, "fp32")
    assert bound.startswith("compute") and floor == pytest.approx(ConvShape(10, 6, 1, 64, 64, 5).flops / 67e12)
    assert checks.floor_seconds(s, 4, None, None, "fp32") == (None, "no datasheet peak for this GPU")


# ------------------------------------------------------------------ scaffolding and the CLI


@pytest.mark.parametrize("contract, files", [
    ("device", ["k1.cu"]), ("host", ["profconv.toml", "k1.cu"]), ("course", ["new-forward.cu"]), ("python", ["k1.py"])])
def test_kernel_new_writes_a_loadable_kernel(tmp_path, contract, files, cli):
    r = cli("kernel", "new", "k1", "--contract", contract, "--dir", tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "k1").iterdir()) == sorted(files)
    d = manifest.load(tmp_path / "k1")
    assert d.contract == contract and (d.name == "k1" or contract == "course")
    assert f"next: profconv run --model ece408 --kernel {tmp_path / 'k1'}" in " ".join(r.stdout.split())
    again = cli("kernel", "new", "k1", "--contract", contract, "--dir", tmp_path)
    assert again.returncode == 2 and "exists: choose another name or pass --force" in again.stderr


def test_scaffold_refuses_bad_names_and_contracts(tmp_path):
    with pytest.raises(Exception, match="start with a letter"):
        scaffold.write(tmp_path, "1bad", "device")
    with pytest.raises(Exception, match="is not one of device, host, course, python"):
        scaffold.files("k", "cuda")


@needs_nvcc
@pytest.mark.parametrize("contract", ["host", "course"])
def test_scaffolds_compile(tmp_path, contract):
    scaffold.write(tmp_path / "k", "k", contract)
    d = manifest.load(tmp_path / "k")
    lib = (build.build_host(d.source, tmp_path / "b", "sm_90", d.defines, d.options) if contract == "host"
           else build.build_course(d.source, d.flavour, tmp_path / "b", "sm_90", {}, ()))
    assert lib.path.is_file()


def test_run_without_gpu_records_user_kernels_as_skipped(tmp_path, monkeypatch, cli):
    monkeypatch.setattr("profconv.run.gpu.cupy_or_none", lambda: None)
    out = tmp_path / "run"
    r = cli("run", "--model", "ece408", "--images", "2", "--variant", "cpu", "--kernel",
            EXAMPLES / "device-tiled" / "conv_tiled.cu", "--kernel", EXAMPLES / "course-minidnn", "--out", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "run.json").read_text())
    rows = {x["variant"]: x for x in doc["results"]}
    assert rows["tiled"]["status"] == "skipped" and rows["tiled"]["error"] == "needs CUDA and CuPy"
    src = EXAMPLES / "device-tiled" / "conv_tiled.cu"
    assert rows["tiled"]["user"]["source_sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    course = rows["course-minidnn"]["user"]
    assert (course["contract"], course["flavour"]) == ("course", "minidnn-stride")
    assert doc["settings"]["kernels"] == [str(src.resolve()), str((EXAMPLES / "course-minidnn" / "new-forward.cu").resolve())]
    assert "your kernels skipped" in " ".join(r.stdout.split())


@pytest.mark.parametrize("args, message", [
    (["--variant", "none"], "--variant none leaves nothing to run: add --kernel PATH"),
    (["--kernel", "nope.cu"], "nope.cu: no such file or folder"),
    (["--sanitize"], "--contract and --sanitize apply to --kernel files"),
    (["--kernel", str(EXAMPLES / "host-constant"), "--contract", "cuda"], "--contract 'cuda' is not one of"),
])
def test_run_kernel_errors_are_one_line(args, message, tmp_path, cli):
    r = cli("run", "--model", "ece408", "--images", "2", "--out", tmp_path, *args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error: ") and message in " ".join(r.stderr.split()) and r.stderr.count("\n") <= 3


def test_duplicate_and_builtin_names_are_made_unique(tmp_path):
    from profconv.session.run import load_kernels

    write(tmp_path / "a", {"naive.cu": (EXAMPLES / "device-tiled" / "conv_tiled.cu").read_text().replace(
        'name = "tiled"', 'name = "naive"')})
    decls = load_kernels([str(EXAMPLES / "device-tiled" / "conv_tiled.cu"), str(EXAMPLES / "device-tiled" / "conv_tiled.cu"),
                          str(tmp_path / "a" / "naive.cu")], None)
    assert [d.name for d in decls] == ["tiled", "tiled-2", "user-naive"]


def test_report_reads_a_run_with_user_kernels(tmp_path, cli):
    src = ROOT / "tests" / "data" / "runs" / "user-kernels-h200.json"
    r = cli("report", src, "--markdown", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "r.md").read_text()
    assert "| 1,000 | tiled | fp32 | conv1 | 424 µs |" in text
    assert "| tiled | user kernel (device) | fp32 |" in text
    assert "`out-of-bounds` conv1 (1,000 images): CUDARuntimeError: cudaErrorIllegalAddress" in text


def test_compare_says_whether_the_users_kernel_changed(tmp_path, cli):
    src = json.loads((ROOT / "tests" / "data" / "runs" / "user-kernels-h200.json").read_text())
    keep = [r for r in src["results"] if r["variant"] in ("cudnn", "tiled")]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({**src, "results": keep}))
    changed = [dict(r, user={**r["user"], "source_sha256": "b" * 64}) if r["user"] else r for r in keep]
    b.write_text(json.dumps({**src, "results": changed}))
    r = cli("report", "--compare", a, a)
    assert f"your kernel tiled: same source (sha256 {keep[1]['user']['source_sha256'][:12]})" in r.stdout
    r = cli("report", "--compare", a, b)
    assert r.returncode == 0, r.stderr
    assert f"your kernel tiled: source changed (sha256 {keep[1]['user']['source_sha256'][:12]} -> bbbbbbbbbbbb)" in r.stdout


def test_failures_the_layer_table_cannot_show_are_listed():
    from profconv.commands.run import unseen_failures
    from profconv.records import ConvResult, VariantResult

    edge = VariantResult(10000, "y3", "user kernel (course)", "fp32", status="failed",
                         error="6 of 8 edge-shape checks failed", user={"user": True},
                         conv=[ConvResult(layer="conv1", shape="s"), ConvResult(layer="conv2", shape="s")])
    wrong = VariantResult(10000, "w", "t", "fp32", status="failed", error="conv1: relative error 0.5",
                          conv=[ConvResult(layer="conv1", shape="s", status="failed", error="relative error 0.5")])
    assert unseen_failures([edge, wrong]) == ["y3 (user) (10000): 6 of 8 edge-shape checks failed"]


def test_layer_rows_of_a_failed_kernel_never_say_ok():
    """The (user) rows printed `ok` while the summary under the table listed the same kernel as FAILED."""
    from profconv.commands.run import _status_cell
    from profconv.records import ConvResult, VariantResult

    layer = ConvResult(layer="conv1", shape="s")
    edge = VariantResult(10000, "y3", "t", "fp32", status="failed", error="not general: 2 of 8 edge-shape checks failed",
                         user={"user": True}, conv=[layer])
    assert _status_cell(edge.status, layer.status, layer.error).plain == \
        "FAILED (the kernel, see below; this layer's checks passed)"
    assert _status_cell(VariantResult(10000, "ok", conv=[layer]).status, layer.status, layer.error).plain == "ok"
    bad = ConvResult(layer="conv1", shape="s", status="failed", error="relative error 0.5")
    assert _status_cell(edge.status, bad.status, bad.error).plain == "FAILED: relative error 0.5"


def test_an_unrecognised_kernel_is_its_own_failed_row_and_the_others_still_run(tmp_path, monkeypatch, cli):
    """One --kernel that cannot be recognised used to refuse the whole run (exit 2), the good files included."""
    monkeypatch.setattr("profconv.run.gpu.cupy_or_none", lambda: None)
    (tmp_path / "notes.cu").write_text("int main() { return 0; }\n")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "new-forward.cu").write_text(
        "void GPUInterface::conv_forward_gpu_prolog(float *y) {}\nvoid GPUInterface::conv_forward_gpu(float *y, int B) {}\n")
    out = tmp_path / "run"
    r = cli("run", "--model", "ece408", "--images", "2", "--variant", "cpu", "--kernel", tmp_path / "notes.cu",
            "--kernel", tmp_path / "bad", "--kernel", EXAMPLES / "course-minidnn", "--out", out)
    assert r.returncode == 1, r.stderr
    rows = {x["variant"]: x for x in json.loads((out / "run.json").read_text())["results"]}
    assert rows["cpu"]["status"] == "ok" and rows["course-minidnn"]["status"] == "skipped"
    assert rows["notes"]["status"] == "failed" and f"{tmp_path / 'notes.cu'}: no __global__ kernel" in rows["notes"]["error"]
    bad = rows["bad"]
    assert ("GPUInterface::conv_forward_gpu takes 2 parameters; the course's take 9 (y, x, k, B, M, C, H, W, K) or 10 "
            "(with a trailing stride S)") in bad["error"]
    assert bad["facts"]["form"]["contract"] == "course" and bad["facts"]["legacy_status"] == "failed"
    assert bad["facts"]["form"]["evidence"] == "GPUInterface::conv_forward_gpu(float *y, int B)"


def test_the_secret_seed_is_redacted_from_the_recorded_command_line():
    from profconv.run.user.isolate import redact_secret, seed_fields

    assert redact_secret(["run", "--secret-seed", "s3cr3t", "--kernel", "k.cu", "--secret-seed=x"]) == [
        "run", "--secret-seed", "(secret)", "--kernel", "k.cu", "--secret-seed=(secret)"]
    a, b = seed_fields("s3cr3t"), seed_fields("other")
    assert a["secret"] and a["seed"] != b["seed"] and seed_fields(None) == {}


def test_the_course_timing_is_shown_beside_the_warm_median():
    """The course timed one cold call; profconv's Op Time is the warm median: a cuBLAS handle created inside
    conv_forward_gpu costs 370 ms cold and 4 ms warm (the H200 run of the real file), and both are shown."""
    from profconv.commands.run import course_timing_lines
    from profconv.records import KernelFacts, LayerFacts, RunRecord, TimingFacts, VariantResult
    from profconv.records.facts import FormFacts

    facts = KernelFacts(form=FormFacts(contract="course", form="minidnn"), layers=[
        LayerFacts(layer="conv1", shape="s", timing=TimingFacts(cold_s=0.370, op_median_s=0.0044)),
        LayerFacts(layer="conv2", shape="s", timing=TimingFacts(cold_s=0.012, op_median_s=0.0100))])
    res = VariantResult(10000, "op_4", "t", "fp32", user={"user": True}, facts=facts)
    rec = RunRecord(argv=[], created="x", environment={}, model={"name": "ece408-fa20"}, results=[res])
    assert course_timing_lines(rec) == [
        "op_4 (user) (10000): Op Time as the course timed it (one cold call): 382 ms (conv1 370 ms, conv2 12 ms); "
        "warm median 14.4 ms"]
