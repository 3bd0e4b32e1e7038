"""Peak memory and CPU of `profconv parse` for every dialect at one size (issue 23: "peak RSS <= 3
bytes per input byte absolute at 20 MB for every dialect and for the terminal table").

benchmarks/parse_throughput.py holds its machine-written inputs (ten) to that target; this one holds
every dialect's real logs to it: each input is a real test log (tests/data, SOURCES.md) repeated to
--mb (a sweep of runs, one after the other, as a script that profiles each configuration and appends
to one file makes), or one run made long (an ncu console page of thousands of kernels of one
process, two big ncu --csv pages). For each: a child `python -m profconv parse FILE --json` (output
to /dev/null) and the terminal table (to a pipe read to the end), their CPU seconds (user + system)
and absolute peak RSS (ru_maxrss: nothing subtracted), bytes of RSS per input byte, and whether the
target is met.

--form writes each input as a Windows or gzip user hands it over: `crlf` ('\r\n' line ends, as a
program's output redirected on Windows), `powershell5` (UTF-16LE with its mark and '\r\n': PowerShell 5's
`>`), `utf8-mark` (UTF-8 with a byte-order mark and '\r\n': Notepad, PowerShell 5's `Out-File -Encoding
utf8`), `gz` (gzip of the plain input), `stdin` (the plain input piped in: `profconv parse - < FILE`),
`cut` (the plain input cut in the middle of the line at 95% of it: a profiler killed while it wrote).
Bytes per byte are then of the plain input's size (a .gz's text, not its compressed bytes; a UTF-16
file's characters, not its two bytes each; a cut log's bytes left).

    python benchmarks/parse_memory.py --mb 20
    python benchmarks/parse_memory.py --mb 20 --only ncu-console-runs,cudaprof-runs
    python benchmarks/parse_memory.py --mb 20 --form crlf
"""

from __future__ import annotations

import argparse
import codecs
import gzip
import os
import shlex
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import parse_throughput  # noqa: E402
from parse_throughput import child_peak, ncu_details, ncu_raw, profconv_argv  # noqa: E402

DATA = ROOT / "tests" / "data"
TARGET = 3.0  # bytes of peak RSS per input byte


def repeated(log: str) -> Callable[[Path, int], None]:
    """A real log written over and over to `size` bytes (a sweep of its runs)."""
    def make(path: Path, size: int) -> None:
        data = (DATA / log).read_bytes()
        data += b"" if data.endswith(b"\n") else b"\n"
        path.write_bytes(data * (size // len(data) + 1))
    return make


def one_process(log: str) -> Callable[[Path, int], None]:
    """An ncu console log's first run made long: its kernels' sections after its '[N] app@host' line
    repeated to `size` bytes (one process's thousands of kernels: one profile)."""
    def make(path: Path, size: int) -> None:
        lines = (DATA / log).read_text().splitlines(keepends=True)
        k = next(i for i, line in enumerate(lines) if line.startswith("["))
        end = next((i for i in range(k + 1, len(lines)) if lines[i].startswith("==PROF==")), len(lines))
        body = "".join(lines[k + 1 : end])
        path.write_text("".join(lines[: k + 1]) + body * (size // len(body) + 1))
    return make


def processes(log: str, each: int) -> Callable[[Path, int], None]:
    """one_process's page of `each` bytes, its whole log (its '==PROF==' lines and program output)
    written over and over to `size` bytes: processes of ~10,000 kernels one after the other."""
    def make(path: Path, size: int) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            one = Path(tmp) / "one.log"
            one_process(log)(one, each)
            data = one.read_bytes()
            path.write_bytes(data * (size // len(data) + 1))
    return make


def generated(key: str) -> Callable[[Path, int], None]:
    """benchmarks/parse_throughput.py's input `key` (its read_csv rows not written)."""
    def make(path: Path, size: int) -> None:
        parse_throughput.INPUTS[key][1](path, Path(os.devnull), size)
    return make


def two_pages(make_page: Callable[[Path, Path, int], None]) -> Callable[[Path, int], None]:
    """Two ncu --csv pages of half the size each, one after the other (two runs of thousands of launches)."""
    def make(path: Path, size: int) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            page, plain = Path(tmp) / "page.log", Path(tmp) / "plain.csv"
            make_page(page, plain, size // 2)
            path.write_bytes(page.read_bytes() * 2)
    return make


INPUTS: dict[str, tuple[str, Callable[[Path, int], None]]] = {
    "nvprof-seed-runs": ("nvprof, an ECE408 seed report's log", repeated("seeds/001_f908eb42489cd140.log")),
    "nsys-console-runs": ("nsys stats console output", repeated("nsys-text/zx3xyy-nsys2024.6.2-stats-pytorch-2.7B.log")),
    "ncu-console-runs": ("ncu console, a run of one kernel's metrics",
                         repeated("ncu-text/eduardo4jesus-hw8-smem-transpose-metrics.log")),
    "ncu-console-one-process": ("ncu console, one process of thousands of kernels",
                                one_process("ncu-text/eduardo4jesus-hw8-smem-transpose-metrics.log")),
    "ncu-console-one-process-2025": ("ncu 2025.3 console (sections, advice), one process of thousands of kernels",
                                     one_process("ncu-text/h200-ncu2025.3-scale-add-square-one-process-45-kernels.log")),
    "ncu-console-processes": ("ncu 2025.3 console, processes of 1.6 MB (10,000 kernels) one after the other",
                              processes("ncu-text/h200-ncu2025.3-scale-add-square-one-process-45-kernels.log", 1_600_000)),
    "ncu-csv-runs": ("ncu --csv 2025.3 details pages, two launches a run",
                     repeated("ncu-csv/h200-ncu2025.3-scale-add-rule-columns-two-launches.csv.log")),
    "ncu-raw-runs": ("ncu --csv --page raw with NVTX columns, a run each",
                     repeated("ncu-csv/yktian-paddle-demo-nvtx-metrics.csv.log")),
    "ncu-raw-two-pages": ("two big ncu --csv --page raw pages", two_pages(ncu_raw)),
    "ncu-details-two-pages": ("two big ncu 2024+ --csv details pages", two_pages(ncu_details)),
    "acc-runs": ("OpenACC timing (PGI_ACC_TIME) runs", repeated("acc-time/oliatsm-cnn-cifar10-nvhpc-acc-time.log")),
    "cudaprof-runs": ("CUDA_PROFILE logs (cuda_profile_0.log)",
                      repeated("cudaprof/dmikushin-kernelgen-sincos-tesla-c2070-cuda-profile-log.log")),
    "rocprof-runs": ("rocprofv3 --stats tables",
                     repeated("rocprof/amd-hpctraining-rocprofv3-jacobi-domain-hip-api-kernel-stats.csv.log")),
}
# parse_throughput's machine-written inputs (it measures them as they are; --form here the others)
THROUGHPUT = ("nvprof-trace", "nsys-trace", "nvprof-csv", "nsys-csv", "nsys-reports", "nsys-windows", "nvprof-text")
INPUTS.update({key: (f"{parse_throughput.INPUTS[key][0]} (parse_throughput's)", generated(key)) for key in THROUGHPUT})


FORMS: dict[str, Callable[[bytes], bytes]] = {
    "plain": lambda data: data,
    "crlf": lambda data: data.replace(b"\n", b"\r\n"),
    "powershell5": lambda data: codecs.BOM_UTF16_LE + data.decode("utf-8", "replace").replace("\n", "\r\n").encode("utf-16-le"),
    "utf8-mark": lambda data: codecs.BOM_UTF8 + data.replace(b"\n", b"\r\n"),
    "gz": lambda data: gzip.compress(data, compresslevel=6),
    "stdin": lambda data: data,  # the plain input piped in: `profconv parse - < FILE`
    "cut": lambda data: data[:mid_line(data, 0.95)],
}


def mid_line(data: bytes, at: float) -> int:
    """Where a log cut at `at` of its length ends: in the middle of the line there (a profiler killed
    while it wrote a line: a job's time limit)."""
    p = int(len(data) * at)
    start = data.rfind(b"\n", 0, p) + 1
    end = data.find(b"\n", p)
    end = len(data) if end < 0 else end
    return start + max(1, (end - start) // 2)


def in_form(path: Path, form: str) -> Path:
    """The input `path` written in `form` beside it (itself for plain)."""
    if form in ("plain", "stdin"):
        return path
    out = path.with_name(f"{path.stem}.{form}{'.log.gz' if form == 'gz' else '.log'}")
    out.write_bytes(FORMS[form](path.read_bytes()))
    return out


def argv_of(path: Path, out: str, stdin: bool) -> list[str]:
    """The child's command line: `profconv parse FILE OUT`, or with the file piped in (`-`; the shell
    execs Python: the child measured is profconv's)."""
    if not stdin:
        return profconv_argv(path, out)
    args = " ".join(shlex.quote(a) for a in profconv_argv(Path("-"), out))
    return ["sh", "-c", f"exec {args} < {shlex.quote(str(path))}"]


def measure(name: str, path: Path, size: int, outs: tuple[str, ...] = ("--json", "--table"),
            stdin: bool = False) -> list[str]:
    cells = []
    for out in outs:
        cpu, peak = child_peak(argv_of(path, out, stdin))
        per = peak / size
        cells.append(f"{cpu:.2f} s, {peak / 2**20:.0f} MiB, {per:.2f} B/B{'' if per <= TARGET else ' (over)'}")
    return [name, f"{size / 1e6:.1f}", *cells]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=20.0, help="input size in MB (default 20)")
    ap.add_argument("--only", default="", help="comma-separated input names (default: all)")
    ap.add_argument("--form", choices=list(FORMS), default="plain",
                    help="each input as given to profconv: " + ", ".join(FORMS) + " (see above)")
    ap.add_argument("--all", action="store_true", help="also the table of every row (`--all`, into a pipe)")
    ap.add_argument("--dir", type=Path, default=None, help="where the inputs are written (default: a temporary folder)")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(INPUTS)
    unknown = [n for n in names if n not in INPUTS]
    if unknown:
        raise SystemExit(f"unknown input(s) {', '.join(unknown)}: {', '.join(INPUTS)}")
    with tempfile.TemporaryDirectory() as tmp:
        where = args.dir or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        outs = ("--json", "--table", "--all") if args.all else ("--json", "--table")
        print("| input | MB | `--json`: CPU, peak, B/B | table: CPU, peak, B/B |"
              + (" `--all`: CPU, peak, B/B |" if args.all else "") + "\n|---|---|---|---|" + ("---|" if args.all else ""))
        for name in names:
            path = where / f"{name}.log"
            INPUTS[name][1](path, int(args.mb * 1e6))
            given = in_form(path, args.form)
            size = (given if args.form == "cut" else path).stat().st_size  # a cut log: of what is left
            print("| " + " | ".join(measure(name, given, size, outs, args.form == "stdin")) + " |",
                  flush=True)
    print(f"\ntarget: peak RSS <= {TARGET:g} bytes per input byte (of the plain input: --form {args.form}); inputs: "
          + "; ".join(f"{n}: {INPUTS[n][0]}" for n in names))


if __name__ == "__main__":
    main()
