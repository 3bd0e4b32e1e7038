"""Parsed profiles -> the frames a report shows: the rows that make up the >=90% share, per profile
or variant, with readable names; profile titles taken from the source's own headings. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from profconv.analysis.names import demangle, readable
from profconv.analysis.ranking import rank_profile
from profconv.parse.schema import ProfileInfo

TOP_COLUMNS = ["group", "section", "time_pct", "share", "cumulative", "total_s", "calls", "avg_s", "name",
               "full_name", "in_top"]
"""group: the profile or variant the row belongs to; time_pct as the tool printed it (percent), share
and cumulative as fractions of the section's time; total_s and avg_s in seconds; name readable
(demangled, template arguments folded), full_name demangled in full; in_top: inside the share."""


def ranked(frame: pd.DataFrame, profile: int, section: str, threshold: float, group: str) -> pd.DataFrame:
    """Every row of one section of one profile, ranked by time, with the >=threshold set marked."""
    found = rank_profile(frame, profile, [section], threshold)
    if not found:
        return pd.DataFrame(columns=TOP_COLUMNS)
    r = found[0].rows
    out = pd.DataFrame({
        "group": group, "section": section, "time_pct": r["time_pct"].astype("float64"),
        "share": r["share"].astype("float64"), "cumulative": r["cumulative"].astype("float64"),
        "total_s": r["total_ns"].astype("float64") / 1e9, "calls": r["calls"],
        "avg_s": r["avg_ns"].astype("float64") / 1e9,
        "name": [readable(str(n)) for n in r["name"]], "full_name": [demangle(str(n)) for n in r["name"]],
        "in_top": r["in_top"].astype(bool),
    })
    return out[TOP_COLUMNS]


def top_rows(frame: pd.DataFrame, groups: list[tuple[int, str]], section: str, threshold: float) -> pd.DataFrame:
    """The >=threshold rows of `section` for each (profile number, group label), in the given order."""
    parts = [ranked(frame, number, section, threshold, label) for number, label in groups]
    parts = [p[p["in_top"]] for p in parts if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=TOP_COLUMNS)


METRIC_COLUMNS = ["kernel", "full_name", "metric", "description", "unit", "min", "max", "avg", "total"]
"""kernel readable, full_name demangled; min, max, avg (the metric's value) and total (an nvprof event's)
each the number, in `unit`, or the text the tool printed instead (a level 'Low (1)', n/a, a Min/Max in
another unit); None where it printed nothing."""


def metric_rows(frame: pd.DataFrame, profile: int) -> pd.DataFrame:
    """One profile's metric rows (nvprof --metrics/--events, Nsight Compute) in file order."""
    m = frame[(frame["profile"] == profile) & frame["section"].isin(["metric", "ncu-metric"])]

    def cells(value: str, text: str | None) -> list:
        texts = m[text] if text else [None] * len(m)
        return [t if isinstance(t, str) else (None if v != v else float(v)) for v, t in zip(m[value], texts)]

    def strings(col: str) -> list:
        return [v if isinstance(v, str) else None for v in m[col]]

    return pd.DataFrame({
        "kernel": [readable(str(n)) for n in m["name"]], "full_name": [demangle(str(n)) for n in m["name"]],
        "metric": strings("metric"), "description": strings("description"), "unit": strings("unit"),
        "min": cells("value_min", "value_text_min"), "max": cells("value_max", "value_text_max"),
        "avg": cells("value", "value_text"), "total": cells("value_total", None),
    }, columns=METRIC_COLUMNS)


_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_IMAGES = re.compile(r"\b(\d{1,3}(?:,\d{3})+|\d+)\s+(?:[a-z]+\s+)?(?:images|data\s+size)\b", re.IGNORECASE)
_MILESTONE = re.compile(r"milestone\s*\d+(?:\s*[-–&,]\s*\d+)*", re.IGNORECASE)
_ENUM = re.compile(r"^(?:[-*•]\s*|\(?[0-9a-z]{1,3}[.)]+\s*[:.]?\s*)+", re.IGNORECASE)


def _clean(text: str) -> str:
    text = _ENUM.sub("", text.strip()).strip().rstrip(":").strip()
    return re.sub(r"\s+", " ", text)


def profile_title(lines: list[str], info: ProfileInfo) -> str | None:
    """'Milestone 3 › nvprof profiling the execution (10000 default data size)', from the markdown
    headings above the profile (the top-level section and the closest sub-heading), plus the image
    count printed between them and the profile; None where the source has no headings."""
    crumbs: dict[int, tuple[int, str]] = {}
    milestone: tuple[int, str] | None = None  # the last "Milestone N" heading, whatever its level
    for number, line in enumerate(lines[: max(0, info.line_start - 1)], start=1):
        m = _HEADING.match(line)
        if m and _clean(m.group(2)):
            level = len(m.group(1))
            crumbs = {k: v for k, v in crumbs.items() if k < level}
            crumbs[level] = (number, _clean(m.group(2)))
            if re.search(r"\bmilestone\s*\d", m.group(2), re.IGNORECASE):
                milestone = (number, _MILESTONE.search(m.group(2)).group(0).title())  # type: ignore[union-attr]
    if not crumbs:
        return None
    levels = sorted(crumbs)
    below_title = [lv for lv in levels if lv >= 2] or levels
    parts = [milestone[1] if milestone else crumbs[below_title[0]][1]]
    deepest = crumbs[below_title[-1]][1]
    if deepest.lower() != parts[0].lower() and parts[0].lower() not in deepest.lower():
        parts.append(deepest)
    title = " › ".join(parts)
    last_heading = max(n for n, _ in crumbs.values())
    between = lines[last_heading: max(0, info.line_start - 1)]
    if _IMAGES.search(title):
        return title
    for text in reversed(between):
        m = _IMAGES.search(text)
        if m:
            title += f", {int(m.group(1).replace(',', '')):,} images"
            break
    return title


def profile_titles(lines: list[str] | None, infos: Sequence[ProfileInfo]) -> dict[int, str]:
    """A title per profile number: the source's headings where it has them, else 'Profile N';
    repeated titles get their profile number."""
    titles = {i.profile: (profile_title(lines, i) if lines else None) or f"Profile {i.profile}" for i in infos}
    counts = pd.Series(list(titles.values())).value_counts()
    return {n: (f"{t} (profile {n})" if counts[t] > 1 else t) for n, t in titles.items()}
