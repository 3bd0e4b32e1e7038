"""Every form the course used, detected from the source (never the file name), on committed files of our own
written in each form with the oddities of real ones; the course's tree and include paths for the build."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from profconv.run.user import build, forms, manifest

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "tests" / "data" / "kernels" / "course"
CHEAT = ROOT / "tests" / "data" / "kernels" / "cheat"
EXAMPLES = ROOT / "examples"

FILES = {  # folder -> (form, name, the oddity it carries)
    "mxnet-macros": ("mxnet", "mxnet-macros", "macros named tx, ty, min; specialisation and generic template"),
    "mxnet-generic": ("mxnet-generic", "mxnet-generic", "Fall 2017: generic template only, atomicAdd into y"),
    "minidnn-old": ("minidnn", "minidnn-old", "Fall 2020 names, a comment inside a parameter list"),
    "minidnn-const": ("minidnn", "minidnn-const", "filters in constant memory"),
    "minidnn-single": ("minidnn-single", "minidnn-single", "conv_forward_gpu alone, host pointers"),
    "specialised": ("minidnn-stride", "specialised", "layer-specialised kernel, stride S"),
    "m3/req_1": ("minidnn", "req_1", "TF32 WMMA, relative include of the course header"),
    "m3/op_4": ("minidnn", "op_4", "cuBLAS handle in conv_forward_gpu, cudaHostRegister, /usr/local/cuda-8.0 include"),
}


@pytest.mark.parametrize("folder", FILES)
def test_each_committed_course_file_is_detected_in_its_form(folder):
    form, name, _ = FILES[folder]
    d = manifest.load(COURSE / folder)
    assert (d.contract, d.flavour, d.name) == ("course", form, name)
    found = forms.detect(d.source.read_text())
    assert found.form == form and found.evidence and found.error is None


def test_the_form_comes_from_the_source_not_the_file_name(tmp_path):
    mini = (EXAMPLES / "course-minidnn" / "new-forward.cu").read_text()
    mx = (COURSE / "mxnet-generic" / "new-forward.cuh").read_text()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "new-forward.cuh").write_text(mini)  # a mini-dnn file under the MXNet name
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "kernel_v3.cu").write_text(mx)  # an MXNet file under any name
    assert manifest.load(tmp_path / "a").flavour == "minidnn-stride"
    assert manifest.load(tmp_path / "b" / "kernel_v3.cu").flavour == "mxnet-generic"
    # a folder with several .cu files: the course file is the one whose source is a course form
    (tmp_path / "b" / "helpers.cu").write_text("__global__ void helper(float* y) { y[0] = 0; }\n")
    assert manifest.load(tmp_path / "b").source.name == "kernel_v3.cu"


def test_generic_template_evidence_and_eras():
    text = (COURSE / "mxnet-generic" / "new-forward.cuh").read_text()
    f = forms.detect(text)
    assert f.evidence.startswith("template<typename gpu, typename DType> void forward(mshadow::Tensor<gpu, 4, DType> &y")
    assert f.era == "MXNet new-forward.cuh, generic forward template (Fall 2017)"
    # the skeleton's own generic template beside a specialisation: the specialisation decides
    both = forms.detect((COURSE / "mxnet-macros" / "new-forward.cuh").read_text())
    assert both.form == "mxnet" and both.evidence.startswith("template <> void forward<gpu, float>(")
    # a templated kernel (forward_kernel<gpu, DType>) is not a generic forward
    assert forms.detect("template<typename gpu, typename DType>\n__global__ void forward_kernel(DType *y) {}").form is None
    # in a comment it does not count
    assert forms.detect("// template<> void forward<gpu, float>(Tensor y, Tensor x, Tensor w)\n").form is None


def test_course_folders_are_a_fact_of_the_path():
    assert forms.course_folder(Path("project/m3/req_1/m3-forward.cu")) == "req_1"
    assert forms.course_folder(Path("m3/op_4/m3-forward.cu")) == "op_4"
    assert forms.course_folder(Path("project/src/layer/custom/new-forward.cu")) is None


def test_parameter_lists_split_at_top_level_commas():
    assert forms.params_of("mshadow::Tensor<gpu, 4, float> &y, const int B") == ["mshadow::Tensor<gpu, 4, float> &y",
                                                                                "const int B"]


def test_the_course_image_include_paths_are_mapped_to_this_toolkit():
    text = ('#include "/usr/local/cuda-8.0/targets/x86_64-linux/include/cuda_profiler_api.h"\n'
            "#include </usr/local/cuda-10.1/include/cuda_fp16.h>\n#include \"/home/me/mine.h\"\n#include <cstdio>\n")
    mapped, where = build.map_includes(text, exists=lambda p: False)
    assert mapped.splitlines() == ["#include <cuda_profiler_api.h>", "#include <cuda_fp16.h>", '#include "/home/me/mine.h"',
                                   "#include <cstdio>"]
    assert where == {"/usr/local/cuda-8.0/targets/x86_64-linux/include/cuda_profiler_api.h": "<cuda_profiler_api.h>",
                     "/usr/local/cuda-10.1/include/cuda_fp16.h": "<cuda_fp16.h>"}
    assert build.map_includes(text, exists=lambda p: True)[1] == {}  # a path that exists here is left alone


def test_relative_includes_of_the_course_header_resolve_in_the_course_tree(tmp_path):
    text = '#include "../../src/layer/custom/gpu-new-forward.h"\n#include "gpu-new-forward.h"\n'
    assert build.header_places(text) == [(2, "src/layer/custom/gpu-new-forward.h"), (0, "gpu-new-forward.h")]
    dirs = build.course_tree(text, tmp_path, "// header\n")
    assert dirs == [tmp_path / "tree" / "up0" / "up1"]
    assert (dirs[0] / "../../src/layer/custom/gpu-new-forward.h").resolve().read_text() == "// header\n"


def test_cublas_is_linked_when_the_file_includes_it():
    assert build.libraries('#include <cublas_v2.h>\n', None)[-1].startswith(("-lcublas", "-rpath="))
    assert build.libraries("// #include <cublas_v2.h>\n#include <cuda.h>\n", None) == ()


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@needs_nvcc
@pytest.mark.parametrize("folder", [f for f in FILES if f != "m3/op_4"] +
                         [pytest.param("m3/op_4", marks=pytest.mark.skipif(
                             not Path(str(shutil.which("nvcc") or "/x/x/nvcc")).resolve().parent.parent.joinpath(
                                 "include", "cublas_v2.h").is_file() and build.pip_library("cublas_v2.h", "libcublas.so")
                             is None, reason="no cuBLAS headers here"))])
def test_each_committed_course_file_builds_as_the_course_built_it(tmp_path, folder):
    d = manifest.load(COURSE / folder)
    lib = build.build_course(d.source, d.flavour, tmp_path, "sm_90", {}, d.options)
    assert lib.path.is_file()
    if folder == "m3/op_4":
        assert "/usr/local/cuda-8.0/targets/x86_64-linux/include/cuda_profiler_api.h" in lib.include_map


@needs_nvcc
@pytest.mark.parametrize("cheat", sorted(p.name for p in CHEAT.iterdir() if p.is_dir()))
def test_the_cheat_suite_builds(tmp_path, cheat):
    d = manifest.load(CHEAT / cheat)
    assert d.contract == "course" and d.flavour == "minidnn"
    assert build.build_course(d.source, d.flavour, tmp_path, "sm_90", {}, d.options).path.is_file()


@needs_nvcc
def test_a_generic_forward_with_other_const_ness_is_the_one_called(tmp_path):
    """The stand-in declares forward(Tensor&, const Tensor&, const Tensor&); a Fall 2017 file may declare its
    generic template with non-const tensors: the driver's non-const tensors make the file's own the better match."""
    text = (COURSE / "mxnet-generic" / "new-forward.cuh").read_text().replace(
        "const mshadow::Tensor<gpu, 4, DType> &x, const mshadow::Tensor<gpu, 4, DType> &k",
        "mshadow::Tensor<gpu, 4, DType> &x, mshadow::Tensor<gpu, 4, DType> &k")
    src = tmp_path / "new-forward.cuh"
    src.write_text(text)
    assert forms.detect(text).form == "mxnet-generic"
    assert build.build_course(src, "mxnet-generic", tmp_path / "b", "sm_90", {}, ()).path.is_file()


@needs_nvcc
def test_kernels_are_built_at_once_before_their_children_run(tmp_path, monkeypatch):
    """isolate.prebuild compiles several course kernels in parallel with the very command their children will
    use: a child then finds its library built (nvcc is not run again)."""
    from profconv.run.user import isolate
    from profconv.run.user.contracts import UserKernel, cand_label

    decls = [manifest.load(CHEAT / "replayed"), manifest.load(CHEAT / "skips_calls"), manifest.load(COURSE / "specialised")]
    isolate.prebuild(decls, tmp_path, "sm_90", workers=3)
    monkeypatch.setattr(build.subprocess, "run", lambda *a, **k: pytest.fail("nvcc ran again"))
    for d in decls:
        k = UserKernel(d, tmp_path / d.name)
        lib = build.build_course(d.source, d.flavour, k.build_dir / cand_label(k.default()), "sm_90", k._defines({}),
                                 d.options)
        assert lib.path.is_file()


def test_a_file_name_that_is_no_variant_name_is_made_one(tmp_path):
    """Real files are named 'new-forward-V1(const).cu', 'new-forwardOp#1.cuh', 'new-forward ParamSweep.cuh': the
    run names them, it does not refuse them (a name the manifest declares is still checked)."""
    text = (COURSE / "mxnet-generic" / "new-forward.cuh").read_text()
    for stem, name in [("new-forward-V1(const)", "new-forward-V1-const"), ("new-forwardOp#1", "new-forwardOp-1"),
                       ("new-forward ParamSweep", "new-forward-ParamSweep"), ("_x", "k_x")]:
        (tmp_path / f"{stem}.cuh").write_text(text)
        assert manifest.load(tmp_path / f"{stem}.cuh").name == name
    (tmp_path / "bad.cuh").write_text('/* profconv\nname = "a b"\n*/\n' + text)
    with pytest.raises(manifest.ManifestError, match="name 'a b' must be letters"):
        manifest.load(tmp_path / "bad.cuh")


@needs_nvcc
def test_the_course_trees_matmul_is_provided_when_a_file_uses_it(tmp_path):
    """Spring 2025's project tree gave its students matmul.h / matmul.cu (matrixMultiplyShared) beside
    gpu-new-forward.h; a req_N file calls it without bringing it."""
    (tmp_path / "m3-forward.cu").write_text(
        '#include "gpu-new-forward.h"\n#include "matmul.h"\n'
        "__host__ void GPUInterface::conv_forward_gpu_prolog(const float *a, const float *b, const float *c, float **d,"
        " float **e, float **f, const int B, const int M, const int C, const int H, const int W, const int K) {}\n"
        "__host__ void GPUInterface::conv_forward_gpu(float *y, const float *x, const float *k, const int B, const int M,"
        " const int C, const int H, const int W, const int K) {\n"
        "    dim3 block(MATMUL_TILE_WIDTH, MATMUL_TILE_WIDTH), grid(1, 1);\n"
        "    matrixMultiplyShared<<<grid, block>>>(k, x, y, M, C * K * K, C * K * K, 1, M, 1);\n}\n"
        "__host__ void GPUInterface::conv_forward_gpu_epilog(float *a, float *y, float *x, float *k, const int B,"
        " const int M, const int C, const int H, const int W, const int K) {}\n")
    assert build.provided_sources((tmp_path / "m3-forward.cu").read_text(), tmp_path)[0].name == "matmul.cu"
    d = manifest.load(tmp_path / "m3-forward.cu")
    assert build.build_course(d.source, d.flavour, tmp_path / "b", "sm_90", {}, ()).path.is_file()


def test_device_properties_this_toolkit_removed_are_asked_another_way():
    """CUDA 13 removed cudaDeviceProp.clockRate, memoryClockRate, deviceOverlap, ...: a real file printing
    prop.deviceOverlap in get_device_properties compiled in the course and must here (one line for one line)."""
    text = "cout << prop.clockRate << p[i].memoryClockRate << q->deviceOverlap << x.clockRateX;\nint clockRate = 3;\n"
    mapped, where = build.map_removed_props(text, removed=True)
    assert mapped.splitlines() == [
        "cout << profconv_device_attr(cudaDevAttrClockRate) << profconv_device_attr(cudaDevAttrMemoryClockRate) << "
        "profconv_device_attr(cudaDevAttrGpuOverlap) << x.clockRateX;", "int clockRate = 3;"]
    assert set(where) == {".clockRate", ".memoryClockRate", ".deviceOverlap"}
    assert build.map_removed_props(text, removed=False) == (text, {})  # a toolkit that still has them
