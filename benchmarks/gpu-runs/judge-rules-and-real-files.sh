#!/usr/bin/env bash
# judge-rules' final GPU window (from the snapshot's root): the judge's GPU tests (the cheat suite and our
# attribution files, each verdict naming its rule), then the real course files that sit in a req_N/op_N
# folder (/work/notes/student-files: $DATA, never committed) laid out at their course paths and judged by
# Spring 2025's rules, 4 runs at a time; every run.json re-judged offline under sp25, minidnn and profconv.
# Results under $RES; BUDGET: the lane's seconds.
set -x
RES=${RES:-/tmp/judge-res}
BUDGET=${BUDGET:-340}  # the lane is killed at 360 s: finish with margin
START=$SECONDS
left() { echo $(( BUDGET - 25 - (SECONDS - START) )); }
mkdir -p "$RES/real"
exec > >(tee "$RES/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
export PYTHONPATH=".:${PYTHONPATH:-}"
# 1. the judge's GPU tests; their run.json kept under $RES/pytest
timeout 170 python3 -m pytest -p no:cacheprovider -m gpu tests/test_judge_gpu.py -v -rfE -s -n 2 \
    --basetemp="$RES/pytest" -o addopts="" > "$RES/pytest.txt" 2>&1
tail -40 "$RES/pytest.txt"
echo "step 1: $((SECONDS-START)) s"
# 2. real files in req_N / op_N folders, at their course paths (the folder is what the rules read)
if [ -n "${DATA:-}" ] && [ -f "$DATA/index.tsv" ]; then
    tree=/tmp/judge-real
    awk -F'\t' 'NR>1 && $6 ~ /(req|op)_[0-9]+\// {print $1"\t"$6}' "$DATA/index.tsv" > "$RES/real/picked.tsv"
    while IFS=$'\t' read -r folder path; do
        mkdir -p "$tree/$folder/$(dirname "$path")"
        cp "$DATA/$folder"/* "$tree/$folder/$(dirname "$path")/"
        echo "$tree/$folder/$path"
    done < "$RES/real/picked.tsv" > "$RES/real/kernels.txt"
    wc -l "$RES/real/kernels.txt"
    judge_batch() {  # one profconv run for up to 5 files
        n=$1; shift
        args=(); for k in "$@"; do args+=(--kernel "$k"); done
        timeout 150 python3 -m profconv run --model ece408-fa20 --images 100 --variant none --course sp25 \
            --repeat 3 --warmup 1 --ci-target 0 --kernel-timeout 60 --out "$RES/real/run-$n" "${args[@]}" \
            > "$RES/real/run-$n.log" 2>&1
        echo "batch $n rc=$?"
    }
    export -f judge_batch; export RES
    split -l 5 -d "$RES/real/kernels.txt" /tmp/judge-batch-
    ls /tmp/judge-batch-* | timeout $(left) xargs -P 4 -I{} bash -c 'judge_batch "$(basename {})" $(cat {})'
fi
echo "step 2: $((SECONDS-START)) s"
for r in $(find "$RES" -name run.json); do
    echo "== $r"
    timeout 20 python3 scripts/rejudge.py "$r" --course sp25,minidnn,profconv --markdown
done > "$RES/rejudged.md" 2>&1
grep -c "FAILED\|| ok |" "$RES/rejudged.md"
find "$RES" \( -name "*.so" -o -name "*.o" -o -name "*.cubin" \) -delete
find "$RES" -type d \( -name build -o -name tree \) -prune -exec rm -rf {} + 2>/dev/null
find "$RES" -name run.json -size +40k -exec gzip {} \;
du -sh "$RES"
echo "total: $((SECONDS-START)) s"
