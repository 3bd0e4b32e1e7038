#!/usr/bin/env bash
# judge-harness's final GPU window (W4): the numbers of the closing note, on landed code.
#  1. the cheat suite, the committed course files, the secret seed (tests/test_user_cheats_gpu.py);
#  2. the user-kernel GPU tests that were there before (regressions of the harness rewrite);
#  3. real students' files of every era ($DATA: /work/notes/student-files, not committed), one
#     `profconv run --kernel FILE` each, in an order that covers every form first, until the budget ends.
# Every stage writes as it goes under $RES (pytest -v logs, one run folder per file); verdicts.tsv at the end
# (scripts/student_verdicts.py makes it again from the run folders if the lane is cut).
set -x
RES=${RES:-/tmp/jh-res}
DATA=${DATA:-/work/notes/student-files}
BUDGET=${BUDGET:-390}
mkdir -p "$RES/students"
exec > >(tee "$RES/trace.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
nproc; git log --oneline -1 2>/dev/null || true
START=$SECONDS
left() { l=$(( BUDGET - 20 - (SECONDS - START) )); [ "$l" -lt 10 ] && l=10; echo "$l"; }
# 1. cheats, course files, secret seed
timeout 120 python3 -m pytest -p no:cacheprovider -m gpu tests/test_user_cheats_gpu.py -v -rfE -n 3 \
    --basetemp="$RES/pytest" -o addopts="" > "$RES/cheats-tests.txt" 2>&1
tail -40 "$RES/cheats-tests.txt"
find "$RES/pytest" -type d \( -name build -o -name tree \) -prune -exec rm -rf {} + 2>/dev/null
echo "step 1: $((SECONDS-START)) s"
# 2. the user-kernel GPU tests that were there before
timeout 100 python3 -m pytest -p no:cacheprovider -m gpu tests/test_user_kernels_gpu.py -v -rfE -n 5 -o addopts="" \
    > "$RES/user-kernels-tests.txt" 2>&1
tail -30 "$RES/user-kernels-tests.txt"
echo "step 2: $((SECONDS-START)) s"
# 3. real students' files: every form first (round robin over the forms), 12 at a time
python3 - "$DATA/index.tsv" > "$RES/picked.tsv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault(r["form"], []).append(r)
order = []
while any(by.values()):
    for form in sorted(by):
        if by[form]:
            order.append(by[form].pop(0))
for r in order:
    print(f"{r['folder']}\t{r['file']}\t{r['model']}")
PY
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
echo "step 3: $((SECONDS-START)) s"
python3 scripts/student_verdicts.py "$DATA/index.tsv" "$RES/students" > "$RES/verdicts.tsv"
cut -f1,3,5,6 "$RES/verdicts.tsv" | head -40
find "$RES" -name "*.so" -delete
find "$RES" -name run.json -size +40k -exec gzip {} \;
du -sh "$RES"
