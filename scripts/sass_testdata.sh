#!/usr/bin/env bash
# Regenerate tests/data/sass/*.sass: SASS text of our own kernels (kernels/*.cu) and of small kernels of
# each technique (tests/data/sass/src/*.cu), compiled for sm_90 with nvcc and listed with
# `cuobjdump -res-usage -sass` (one file, nvdisasm's listing, too). Needs nvcc, cuobjdump and nvdisasm
# on PATH (the pip wheels nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm carry the last two).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=tests/data/sass
SRC=$OUT/src
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ARCH=sm_90
# one conv layer's sizes (ece408-high conv2) for the kernels whose sizes are macros
LAYER="-DM=16 -DC=4 -DH=40 -DW=40 -DK=7 -DP=0"

dump() {  # name, cubin-or-object: the listing without its encoding comments (a quarter of the size);
    # atomics.sass keeps them, as cuobjdump prints them
    if [ "$1" = atomics ]; then
        cuobjdump -res-usage -sass "$2" | sed -e 's/[[:space:]]*$//' > "$OUT/$1.sass"
    else
        cuobjdump -res-usage -sass "$2" | sed -e 's@[[:space:]]*/\* 0x[0-9a-f]\{16\} \*/$@@' -e 's/[[:space:]]*$//' \
            | grep -v '^$' > "$OUT/$1.sass"
    fi
}

cubin() {  # name, source, extra flags...
    local name=$1 src=$2
    shift 2
    nvcc -cubin -arch=$ARCH -Ikernels "$@" -o "$TMP/$name.cubin" "$src"
    dump "$name" "$TMP/$name.cubin"
}

cubin naive kernels/naive.cu
cubin constant kernels/constant.cu
cubin shared kernels/shared.cu
cubin fused kernels/fused.cu
cubin unroll_gemm kernels/unroll_gemm.cu
cubin tensorcore kernels/tensorcore.cu $LAYER -DCP=8 -DRT=2 -DWARPS=4 -DIMGS=1 -DUNFOLD=0
cubin fp16 kernels/fp16.cu $LAYER -DTW=8 -DMB=4 -DNG=1 -DIMGS=1 -DTHREADS=128 -DPT=1
for f in "$SRC"/*.cu; do
    name=$(basename "$f" .cu)
    case $name in
        spill) cubin "$name" "$f" -maxrregcount=32 ;;
        course_*) ;;  # built as a shared library below
        *) cubin "$name" "$f" ;;
    esac
done
# a course-form file built as the course's shim builds it: a shared library with an embedded fatbin
nvcc -shared -Xcompiler -fPIC -arch=$ARCH -o "$TMP/course_minidnn.so" "$SRC/course_minidnn.cu"
dump course_minidnn "$TMP/course_minidnn.so"
# PTX of the fp16 kernels: scalar __half (fma.rn.f16) and packed __half2 (fma.rn.f16x2)
nvcc -ptx -arch=$ARCH -o "$OUT/half.ptx" "$SRC/half.cu"
# nvdisasm's own listing of one cubin (other headers, no encodings)
nvdisasm -c "$TMP/naive.cubin" | sed -e 's/[[:space:]]*$//' > "$OUT/naive.nvdisasm"
ls -l "$OUT"
