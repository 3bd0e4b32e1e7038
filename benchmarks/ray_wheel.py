"""Make Ray travel to the GPU machine (which has no package index): its cp312 wheel without the parts
profconv grade never loads (the Java worker's jars, RLlib, Data, Serve, Tune, Train, LLM) -- 79 MB
down to about 40 MB, under the 64 MiB a device call carries -- plus its dependencies as wheels.

usage: python benchmarks/ray_wheel.py RAY.whl DEST/    (then carry DEST as .whl-ray)
The wheel's RECORD is rewritten to list only what is left, so pip installs it as usual.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

DROP = ("ray/jars/", "ray/rllib/", "ray/data/", "ray/serve/", "ray/tune/", "ray/train/", "ray/llm/")


def trim(src: Path, dest_dir: Path) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    dst = dest_dir / src.name
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
        for info in zin.infolist():
            if info.filename.startswith(DROP):
                continue
            data = zin.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = [ln for ln in data.decode().splitlines() if not ln.startswith(DROP)]
                data = ("\n".join(lines) + "\n").encode()
            zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    print(f"{dst}: {src.stat().st_size / 2**20:.1f} MiB -> {dst.stat().st_size / 2**20:.1f} MiB")
    return dst


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    trim(Path(sys.argv[1]), Path(sys.argv[2]))
