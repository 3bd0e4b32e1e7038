"""One module per CLI noun: validate options, call the library, hand results to a renderer."""


def comma_list(values: list[str] | None, option: str = "the option") -> list[str]:
    """A repeatable option that also takes comma lists: -v a,b -v c -> [a, b, c].

    Given but naming nothing (`--variant ,` or `--variant ''`) is an error, not "every variant"."""
    names = [n.strip() for v in (values or []) for n in v.split(",") if n.strip()]
    if values and not names:
        from profconv.errors import InputError

        raise InputError(f"{option} names nothing ({', '.join(repr(v) for v in values)}): give at least one name")
    return list(dict.fromkeys(names))  # a name given twice runs once


def out_directory(out, record: str):
    """`--out DIR` checked before any work (made later, by the first write), so a bad one costs nothing:
    a file there, a file on the way or a directory named like the record is a usage error (exit 2); a
    directory the system will not let us write is one line, exit 5 (the OSError, raised here)."""
    if out is None:
        return None
    import errno
    import os

    from profconv.errors import InputError

    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file, not a directory (the record is written to DIR/{record})")
    existing = next(p for p in (out, *out.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise InputError(f"--out {out}: {existing} is a file, not a directory")
    if (out / record).is_dir():
        raise InputError(f"--out {out}: {out / record} is a directory (the record file goes there)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(existing))
    return out


def fresh_directory(parent, stem: str):
    """`parent/stem`, or `stem-2`, `stem-3`, ... if taken: made here (mkdir, not exist_ok), so two runs
    started in the same second never share a directory and never overwrite each other's record."""
    parent.mkdir(parents=True, exist_ok=True)
    for k in range(1, 10_000):
        path = parent / (stem if k == 1 else f"{stem}-{k}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent / stem}: 10,000 directories of that name exist")
