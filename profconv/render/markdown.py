"""GitHub-flavoured markdown from a Document: pure text, figures linked beside the file."""

from __future__ import annotations

import os
import re

from profconv.render.document import Bullets, Document, Figure, Paragraph, RenderOptions, Section, Table

_CODE = re.compile(r"(`+)(.+?)\1", re.S)


def inline(text: str) -> str:
    """Text from a record or a log made safe as inline markdown: a `<` that could open HTML, outside
    code spans, becomes `&lt;`, so a name or note holding `<script>` is shown, never run by the viewer."""
    out, end = [], 0
    for m in _CODE.finditer(text):
        out.append(_entities(text[end:m.start()]))
        out.append(m.group(0))
        end = m.end()
    out.append(_entities(text[end:]))
    return "".join(out)


_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def _entities(text: str) -> str:
    """`<` where it could open HTML (a tag, a comment, an autolink) as `&lt;`; `p < 0.05` stays as it reads."""
    return _TAG.sub("&lt;", text)


def code(text: str) -> str:
    """`text` as one code span, whatever backticks it holds (a longer fence, padded when needed)."""
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * (max(runs) + 1 if runs else 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(headers: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    align = align or ["l"] * len(headers)
    sep = ["---:" if a == "r" else "---" for a in align]
    esc = [[str(c).replace("|", "\\|").replace("\n", " ") for c in r] for r in rows]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines)


def render_table(t: Table, opts: RenderOptions) -> str:
    cells = t.cells(opts.full_names)
    marked = t.marked()
    if all(marked) and t.highlight_kind == "top":
        marked = [False] * len(marked)  # a table of only the >=90% rows: nothing to tell apart
    group_i = next((i for i, c in enumerate(t.columns) if c.key == t.group), None)
    last = None
    rows = []
    for row, mark in zip(cells, marked, strict=True):
        row = list(row)
        for i, c in enumerate(t.columns):
            if c.kind == "code" and row[i] != "—":
                row[i] = code(row[i])
            else:
                row[i] = inline(row[i])
        if group_i is not None:
            if row[group_i] == last:
                row[group_i] = ""
            else:
                last = row[group_i]
        if mark:  # bold what names the row: the kernel name, or the regression flag
            names = [i for i, c in enumerate(t.columns) if c.kind == "code"] or [len(row) - 1]
            row = [f"**{v}**" if v and i in names else v for i, v in enumerate(row)]
        rows.append(row)
    align = ["r" if c.numeric else "l" for c in t.columns]
    parts = [f"**{inline(t.title)}**" if t.title else ""]
    if t.note:
        parts += ["", inline(t.note)]
    parts += ["", table([inline(c.header) for c in t.columns], rows, align)]
    return "\n".join(parts).lstrip("\n")


def _block(b, opts: RenderOptions) -> str:
    if isinstance(b, Table):
        return render_table(b, opts)
    if isinstance(b, Paragraph):
        text = inline(b.text)
        if b.kind == "warning":
            return f"> **Warning:** {text}"
        return f"> {text}" if b.kind == "note" else text
    if isinstance(b, Bullets):
        return "\n".join(f"- {inline(item)}" for item in b.items)
    if isinstance(b, Figure):
        link = b.path
        if opts.link_base is not None:
            link = type(b.path)(os.path.relpath(b.path, opts.link_base))
        return f"![{inline(b.alt)}]({link.as_posix()})"
    raise TypeError(type(b).__name__)


def _section(s: Section, level: int, opts: RenderOptions, out: list[str]) -> None:
    out += ["#" * level + " " + inline(s.title), ""]
    for b in s.blocks:
        out += [_block(b, opts), ""]
    for sub in s.sections:
        if sub.appendix and not opts.full:
            continue
        _section(sub, level + 1, opts, out)


def render(doc: Document, opts: RenderOptions) -> str:
    out = [f"# {inline(doc.title)}", ""]
    body = [s for s in doc.sections if not s.appendix]
    appendix = [s for s in doc.sections if s.appendix]
    for s in body:
        _section(s, 2, opts, out)
    has_hidden = bool(appendix) or any(_has_appendix(s) for s in body)
    if opts.full and appendix:
        out += ["## Appendix: full tables", ""]
        for s in appendix:
            _section(s, 3, opts, out)
    elif has_hidden and opts.full_hint:
        out += ["---", "", opts.full_hint, ""]
    return "\n".join(out).rstrip() + "\n"


def _has_appendix(s: Section) -> bool:
    return any(sub.appendix or _has_appendix(sub) for sub in s.sections)
