"""One module per CLI noun: validate options, call the library, hand results to a renderer."""


def comma_list(values: list[str] | None) -> list[str]:
    """A repeatable option that also takes comma lists: -v a,b -v c -> [a, b, c]."""
    names = [n.strip() for v in (values or []) for n in v.split(",") if n.strip()]
    return list(dict.fromkeys(names))  # a name given twice runs once
