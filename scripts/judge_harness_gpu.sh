#!/usr/bin/env bash
# judge-harness's GPU window: the cheat suite and the committed course files (GPU tests), real students'
# files of every era judged with `profconv run --kernel` ($DATA: /work/notes/student-files, not committed),
# and the user-kernel GPU tests that were there before. Results under $RES.
set -x
RES=${RES:-/tmp/jh-res}
DATA=${DATA:-/work/notes/student-files}
PICK=${PICK:-1}   # which of the three interleaved thirds of the student files (1, 2, 3; 0: all)
mkdir -p "$RES/students"
exec > >(tee "$RES/trace.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
python3 -c "import cupy, msgspec, nvtx; print('cupy', cupy.__version__)"
nvcc --version | tail -1; ls /usr/local/cuda/include/cublas_v2.h
python3 -c "from profconv.run.user import build; print('pip cublas', build.pip_library('cublas_v2.h', 'libcublas.so'))"
nproc
START=$SECONDS
# 1. the cheat suite, the course files' facts, the secret seed (tmp dirs kept: each run.json)
timeout 160 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_user_cheats_gpu.py -rA \
    --basetemp="$RES/pytest" -o addopts="" 2>&1 | tail -60
find "$RES/pytest" -type d \( -name build -o -name tree \) -prune -exec rm -rf {} + 2>/dev/null
find "$RES/pytest" -name "*.so" -delete 2>/dev/null
echo "step 1: $((SECONDS-START)) s"
# 2. real students' files: one `profconv run` each, 8 at a time (Op Times are not comparable under this sharing)
awk -F'\t' -v pick="$PICK" 'NR>1 && (pick==0 || (NR-2)%3==pick-1) {print $1"\t"$10}' "$DATA/index.tsv" > "$RES/picked.tsv"
wc -l "$RES/picked.tsv"
judge_one() {
    folder=$1; model=$2
    timeout 100 python3 -m profconv run --model "$model" --images 100 --variant none --kernel "$DATA/$folder" \
        --repeat 3 --warmup 1 --ci-target 0 --kernel-timeout 80 --out "$RES/students/$folder" \
        > "$RES/students/$folder.log" 2>&1
    echo "$folder rc=$?"
}
export -f judge_one; export DATA RES
timeout 200 xargs -P 8 -L 1 bash -c 'judge_one "$0" "$1"' < "$RES/picked.tsv"
python3 scripts/student_verdicts.py "$DATA/index.tsv" "$RES/students" > "$RES/verdicts.tsv"
cut -f1,3,5,6 "$RES/verdicts.tsv" | head -60
echo "step 2: $((SECONDS-START)) s"
# 3. the user-kernel GPU tests that were there before (regressions of the harness rewrite)
timeout $(( 400 - (SECONDS-START) > 30 ? 400 - (SECONDS-START) : 30 )) python3 -m pytest -q -p no:cacheprovider \
    -m gpu tests/test_user_kernels_gpu.py -x -o addopts="" 2>&1 | tail -40
echo "step 3: $((SECONDS-START)) s"
find "$RES" -name "*.so" -delete
find "$RES" -name run.json -size +40k -exec gzip {} \;
du -sh "$RES"
