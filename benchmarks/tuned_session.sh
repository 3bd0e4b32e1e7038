#!/usr/bin/env bash
# Kernel iteration: tuned vs cuDNN on the three models, then the tuned GPU tests.
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=150
for a in "ece408-high --images 10000" "ece408 --images 10000" "cifar10 --images 1200"; do
  python3 -m profconv run --model $a --variant tuned,cudnn --repeat 10 --out /tmp/t/${a%% *} 2>&1 \
    | grep -E "│ +[0-9,]+ │ (tuned|cudnn) +│ conv" | cut -c1-100
  python3 -c "import json,sys; d=json.load(open('/tmp/t/${a%% *}/run.json'))
[print(c['layer'], c['params']) for r in d['results'] if r['variant']=='tuned' for c in r['conv']]"
done
python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 -k tuned tests/ 2>&1 | tail -2
