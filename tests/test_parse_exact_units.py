"""Times converted to ns are the double nearest the printed decimal times its unit, on every path:
'260.10ms' is 260100000.0, not 260100000.00000003 (a multiplication after float() rounds twice)."""
import random
from decimal import Decimal

from profconv.parse import parse_text, units

ROW = " GPU activities:  100.00%  {t}         1  {t}  {t}  {t}  k\n"
HEAD = ("==7== Profiling result:\n"
        "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n")


def exact(text: str, exp: int) -> float:
    return float(Decimal(text).scaleb(exp))


def test_time_ns_is_the_nearest_double_to_the_decimal_product():
    assert units.time_ns("260.10ms") == 260100000.0
    assert units.time_ns("1.1us") == 1100.0
    assert units.time_ns("260.10 ms") == 260100000.0
    assert units.time_ns("260.10", "ms") == 260100000.0
    assert units.time_ns("1,5ms", locale=units.COMMA_LOCALE) == 1500000.0
    assert units.time_ns("1.234ms", locale=units.COMMA_LOCALE) == 1234000000.0  # '.' groups thousands there
    rnd = random.Random(12)
    for _ in range(2000):
        text = f"{rnd.randrange(10**rnd.randrange(1, 7))}.{rnd.randrange(10**5):05d}"
        for unit, exp in (("ms", 6), ("us", 3), ("s", 9)):
            assert units.time_ns(text + unit) == exact(text, exp), text + unit


def test_scaled_uses_the_shortest_text_of_the_value():
    assert units.scaled(1.1, 1e3) == 1100.0
    assert units.scaled(0.123, 1e-3) == 0.000123
    assert units.scaled(5.0, 1.0) == 5.0
    assert units.scaled(2.0, 1024.0) == 2048.0
    assert units.scaled(float("inf"), 1e3) == float("inf")


def test_summary_rows_bulk_and_line_by_line_and_traces_carry_no_residue():
    # 70 rows take the bulk reader, one row the line-by-line one; both give the same exact values
    for n in (1, 70):
        ps = parse_text(HEAD + ROW.format(t="260.10ms") * n, format="nvprof")
        df = ps.frame
        assert len(df) == n
        assert set(df["total_ns"]) == {260100000.0} and set(df["avg_ns"]) == {260100000.0}
    trace = ("==7== Profiling result:\n"
             "   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*"
             "      Size  Throughput  SrcMemType  DstMemType           Device   Context    Stream  Name\n")
    line = ("260.10ms  1.1000us                    -               -         -         -         -  "
            "4.0000KB  3.4679GB/s    Pageable      Device  Tesla K80 (0)         1         7  [CUDA memcpy HtoD]\n")
    for n in (1, 100):  # one row: the line path; 100: the bulk trace reader
        df = parse_text(trace + line * n, format="nvprof").frame
        rows = df[df["section"] == "gpu-trace"]
        assert len(rows) == n
        assert set(rows["start_ns"]) == {260100000.0} and set(rows["total_ns"]) == {1100.0}
        summary = df[df["section"] == "gpu"].iloc[0]
        assert (summary["avg_ns"], summary["total_ns"]) == (1100.0, 1100.0 * n)
