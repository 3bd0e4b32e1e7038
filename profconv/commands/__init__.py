"""One module per CLI noun: validate options, call the library, hand results to a renderer."""


def comma_list(values: list[str] | None, option: str = "the option") -> list[str]:
    """A repeatable option that also takes comma lists: -v a,b -v c -> [a, b, c].

    Given but naming nothing (`--variant ,` or `--variant ''`) is an error, not "every variant"."""
    names = [n.strip() for v in (values or []) for n in v.split(",") if n.strip()]
    if values and not names:
        from profconv.errors import InputError

        raise InputError(f"{option} names nothing ({', '.join(repr(v) for v in values)}): give at least one name")
    return list(dict.fromkeys(names))  # a name given twice runs once
