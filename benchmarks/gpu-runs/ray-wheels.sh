#!/usr/bin/env bash
# Fill .whl-ray/ (git-ignored) with what the Ray pass of benchmarks/gpu-runs/grade-local-and-ray.sh needs on the GPU
# machine (Python 3.12, no package index): Ray's cp312 wheel trimmed by benchmarks/ray_wheel.py to
# about 40 MB, and its dependencies as wheels (about 4 MB). Run on a machine with a package index:
#   PYTHON=/work/venv/bin/python bash benchmarks/gpu-runs/ray-wheels.sh   # then carry [".whl", ".whl-ray"] on the device call
set -euo pipefail
cd "$(dirname "$0")/../.."
RAY=${RAY:-2.60.0}
PY=${PYTHON:-python3}
PLAT=(--only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64)
tmp=$(mktemp -d)
"$PY" -m pip download -q "ray==$RAY" --no-deps "${PLAT[@]}" -d "$tmp"
rm -rf .whl-ray && mkdir -p .whl-ray
"$PY" benchmarks/ray_wheel.py "$tmp"/ray-"$RAY"-*.whl .whl-ray/
"$PY" -m pip download -q click filelock jsonschema 'msgpack<2,>=1' 'packaging>=24.2' 'protobuf>=3.20.3' pyyaml \
  requests "${PLAT[@]}" -d .whl-ray
rm -rf "$tmp"
du -sh .whl-ray
