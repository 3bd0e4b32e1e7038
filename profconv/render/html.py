"""One self-contained HTML page from a Document: no network needed to view it.

Plots are embedded as base64 PNG; every table sorts by a click on its header (numbers by their raw
value, missing values last); the rows that make up the >=90% share are highlighted (regressions in a
compare view); appendix sections are folded under <details>. Stdlib only: html.escape for every
piece of text that came from a record or a log."""

from __future__ import annotations

import base64
import html
import math
import re

from profconv.render.document import Bullets, Document, Figure, Paragraph, RenderOptions, Section, Table

CSS = """
:root { --fg:#1b1f24; --muted:#57606a; --line:#d0d7de; --top:#fff5c2; --bad:#ffd7d5; --head:#f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 0 auto; max-width: 1200px; padding: 1.5rem; }
h1 { font-size: 1.6rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
h2 { font-size: 1.3rem; margin-top: 2rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
h3 { font-size: 1.1rem; margin-top: 1.5rem; }
h4, h5 { font-size: 1rem; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f3f4f6;
       padding: 0 .2em; border-radius: 3px; }
nav.toc { font-size: 13px; background: var(--head); border: 1px solid var(--line); border-radius: 6px;
          padding: .5rem 1rem; }
nav.toc ul { margin: .2rem 0; padding-left: 1.2rem; }
.scroll { overflow-x: auto; margin: .5rem 0 1rem; }
table.data { border-collapse: collapse; font-size: 13px; }
table.data caption { text-align: left; font-weight: 600; padding: .3rem 0; }
table.data th, table.data td { border: 1px solid var(--line); padding: .25rem .5rem; vertical-align: top; }
table.data th { background: var(--head); position: sticky; top: 0; }
table.data th button { all: unset; cursor: pointer; font-weight: 600; white-space: nowrap; }
table.data th button::after { content: " ↕"; color: var(--muted); font-size: 11px; }
table.data th[aria-sort="ascending"] button::after { content: " ▲"; color: var(--fg); }
table.data th[aria-sort="descending"] button::after { content: " ▼"; color: var(--fg); }
table.data td { white-space: nowrap; }
table.data td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.data td.name { white-space: normal; overflow-wrap: anywhere; min-width: 16rem; max-width: 48rem; }
table.data tr.top td { background: var(--top); font-weight: 600; }
table.data tr.regression td { background: var(--bad); font-weight: 600; }
.legend { color: var(--muted); font-size: 12px; }
.note { border-left: 4px solid #54aeff; background: #ddf4ff; padding: .4rem .8rem; }
.warning { border-left: 4px solid #d4a72c; background: #fff8c5; padding: .4rem .8rem; }
details { margin: .8rem 0; border: 1px solid var(--line); border-radius: 6px; padding: .3rem .8rem; }
details > summary { cursor: pointer; font-weight: 600; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 12px; }
"""

JS = """
(function () {
  function key(td) {
    var v = td.getAttribute('data-v');
    if (v === null || v === '') return null;
    var n = Number(v);
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function sortBy(table, col, th) {
    var body = table.tBodies[0];
    var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
    var sign = dir === 'ascending' ? 1 : -1;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      if (x === null && y === null) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      if (typeof x === typeof y) return (x < y ? -1 : x > y ? 1 : 0) * sign;
      return (typeof x === 'number' ? -1 : 1) * sign;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll('table.data').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      var b = th.querySelector('button');
      if (b) b.addEventListener('click', function () { sortBy(table, i, th); });
    });
  });
})();
"""


def inline(text: str) -> str:
    """The report's inline markdown (`code`, **bold**, hard breaks) as HTML, everything else escaped."""
    out = html.escape(text, quote=False)
    # a code span of one or more backticks, as markdown writes one holding a backtick (``a`b``)
    out = re.sub(r"(`+) ?(.+?) ?\1(?!`)", lambda m: f"<code>{m.group(2)}</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    return out.replace("  \n", "<br>\n")


def _sort_value(v) -> str:
    if v is None:
        return ""
    try:
        if isinstance(v, float) and math.isnan(v):
            return ""
    except TypeError:
        pass
    if hasattr(v, "item"):
        v = v.item()
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, float)):
        return repr(float(v))
    try:
        if v != v:  # pd.NA and friends
            return ""
    except (TypeError, ValueError):
        return ""
    return str(v)


def render_table(t: Table, opts: RenderOptions) -> str:
    cells = t.cells(opts.full_names)
    marked = t.marked()
    if all(marked) and t.highlight_kind == "top":
        marked = [False] * len(marked)  # a table of only the >=90% rows: nothing to tell apart
    records = t.frame.to_dict("records")
    head = "".join(f'<th scope="col" data-key="{html.escape(c.key)}"><button type="button">{html.escape(c.header)}'
                   "</button></th>" for c in t.columns)
    body = []
    for rec, row, mark in zip(records, cells, marked, strict=True):
        tds = []
        for c, text in zip(t.columns, row, strict=True):
            raw = rec.get(c.key)
            attrs = f' data-v="{html.escape(_sort_value(raw))}"'
            cls = ' class="num"' if c.numeric else (' class="name"' if c.kind == "code" else "")
            content = html.escape(text)
            if c.kind == "code" and text != "—":
                full = rec.get(c.full_key) if c.full_key else None
                title = f' title="{html.escape(str(full))}"' if full and str(full) != text else ""
                content = f"<code{title}>{content}</code>"
            tds.append(f"<td{cls}{attrs}>{content}</td>")
        row_cls = f' class="{t.highlight_kind}"' if mark else ""
        body.append(f"<tr{row_cls}>{''.join(tds)}</tr>")
    caption = f"<caption>{inline(t.title)}</caption>" if t.title else ""
    note = f"<p>{inline(t.note)}</p>" if t.note else ""
    legend = ""
    if t.highlight and any(marked):
        what = "regressions" if t.highlight_kind == "regression" else "rows that together take the ≥90% share"
        legend = f'<p class="legend">Highlighted: {what}. Click a header to sort.</p>'
    return (f'{note}<div class="scroll"><table class="data" id="{html.escape(t.id)}" data-rows="{len(records)}">'
            f"{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>{legend}")


def _figure(f: Figure) -> str:
    data = base64.b64encode(f.path.read_bytes()).decode()
    return (f'<figure><img alt="{html.escape(f.alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(f.alt)}</figcaption></figure>")


def _block(b, opts: RenderOptions) -> str:
    if isinstance(b, Table):
        return render_table(b, opts)
    if isinstance(b, Paragraph):
        cls = f' class="{b.kind}"' if b.kind != "text" else ""
        return f"<p{cls}>{inline(b.text)}</p>"
    if isinstance(b, Bullets):
        return "<ul>" + "".join(f"<li>{inline(i)}</li>" for i in b.items) + "</ul>"
    if isinstance(b, Figure):
        return _figure(b)
    raise TypeError(type(b).__name__)


class _Ids:
    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def __call__(self, title: str) -> str:
        base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"
        n = self.seen.get(base, 0)
        self.seen[base] = n + 1
        return base if n == 0 else f"{base}-{n}"


def _section(s: Section, level: int, opts: RenderOptions, ids: _Ids, toc: list[tuple[int, str, str]]) -> str:
    sid = ids(s.title)
    if level <= 3:
        toc.append((level, sid, s.title))
    h = min(level, 6)
    inner = "".join(_block(b, opts) for b in s.blocks)
    inner += "".join(_section(sub, level + 1, opts, ids, toc) for sub in s.sections)
    if s.appendix:
        return (f'<details id="{sid}"><summary>{inline(s.title)}</summary>{inner}</details>')
    return f'<section id="{sid}"><h{h}>{inline(s.title)}</h{h}>{inner}</section>'


def render(doc: Document, opts: RenderOptions) -> str:
    ids = _Ids()
    toc: list[tuple[int, str, str]] = []
    body = []
    appendix = [s for s in doc.sections if s.appendix]
    for s in doc.sections:
        if not s.appendix:
            body.append(_section(s, 2, opts, ids, toc))
    if appendix:
        toc.append((2, "appendix", "Appendix: full tables (folded)"))
        inner = "".join(_section(s, 3, opts, ids, toc) for s in appendix)
        body.append(f'<section id="appendix"><h2>Appendix: full tables</h2>'
                    f'<p class="legend">Every row of every table; click a title to unfold.</p>{inner}</section>')
    items = "".join(f'<li style="margin-left:{(lv - 2) * 1.2}rem"><a href="#{sid}">{inline(t)}</a></li>'
                    for lv, sid, t in toc if lv <= 3)
    nav = f'<nav class="toc"><strong>Contents</strong><ul>{items}</ul></nav>' if items else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(doc.title)}</title><style>{CSS}</style></head>"
            f"<body><h1>{html.escape(doc.title)}</h1>{nav}{''.join(body)}<script>{JS}</script></body></html>\n")
