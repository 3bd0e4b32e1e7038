#!/usr/bin/env bash
# judge-harness's GPU window: the cheat suite and the committed course files (GPU tests), the user-kernel GPU
# tests that were there before (regressions of the harness rewrite), then real students' files of every era
# judged with `profconv run --kernel` ($DATA: /work/notes/student-files, not committed) in the time left.
# Results under $RES. BUDGET: the lane's seconds (300 in window 3).
set -x
RES=${RES:-/tmp/jh-res}
DATA=${DATA:-/work/notes/student-files}
BUDGET=${BUDGET:-300}
PICK=${PICK:-2}   # which interleaved third of the student files (1, 2, 3; 0: all)
mkdir -p "$RES/students"
exec > >(tee "$RES/trace.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
nproc
START=$SECONDS
left() { echo $(( BUDGET - 15 - (SECONDS - START) )); }
# 1. the cheat suite, the course files' facts, the secret seed (each run.json kept)
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_user_cheats_gpu.py -rA -n 3 \
    --basetemp="$RES/pytest" -o addopts="" 2>&1 | tail -50
find "$RES/pytest" -type d \( -name build -o -name tree \) -prune -exec rm -rf {} + 2>/dev/null
echo "step 1: $((SECONDS-START)) s"
# 2. the user-kernel GPU tests that were there before
timeout 95 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_user_kernels_gpu.py -n 4 -rA -o addopts="" \
    -k "every_contract or broken or single_call or sampled or invalid_reads" 2>&1 | tail -40
echo "step 2: $((SECONDS-START)) s"
# 3. real students' files: one `profconv run` each, 12 at a time (Op Times not comparable under this sharing)
awk -F'\t' -v pick="$PICK" 'NR>1 && (pick==0 || (NR-2)%3==pick-1) {print $1"\t"$2"\t"$10}' "$DATA/index.tsv" \
    > "$RES/picked.tsv"
wc -l "$RES/picked.tsv"
judge_one() {
    folder=$1; file=$2; model=$3
    timeout 90 python3 -m profconv run --model "$model" --images 100 --variant none --kernel "$DATA/$folder/$file" \
        --repeat 3 --warmup 1 --ci-target 0 --kernel-timeout 80 --out "$RES/students/$folder" \
        > "$RES/students/$folder.log" 2>&1
    echo "$folder rc=$?"
}
export -f judge_one; export DATA RES
timeout $(left) xargs -P 12 -L 1 -d '\n' bash -c 'IFS=$(printf "\t") read -r f n m <<< "$0"; judge_one "$f" "$n" "$m"' \
    < "$RES/picked.tsv"
python3 scripts/student_verdicts.py "$DATA/index.tsv" "$RES/students" > "$RES/verdicts.tsv"
cut -f1,3,5,6,9,10 "$RES/verdicts.tsv" | head -80
echo "step 3: $((SECONDS-START)) s"
find "$RES" -name "*.so" -delete
find "$RES" -name run.json -size +40k -exec gzip {} \;
du -sh "$RES"
