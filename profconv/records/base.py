"""The machinery every record shares: JSON encoding, checked decoding, version handling.

A record is a msgspec Struct tagged with {"schema": NAME, "schema_version": N}. Writing and reading
go through the same classes, so a field exists in exactly one place. Reading:
  1. the bytes are decoded as JSON (one line naming the position when they are not);
  2. the tag is checked: another file is refused, a newer version is refused in one line, an older
     one is brought to the current shape by the record's own `upgrade` step (one place per record);
  3. the document is converted into the Struct; a wrong type or value is refused in one line that
     names its JSON path (`$.results[0].conv[1].op_time.median_s`).
Every failure is an InputError: exit status 2, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ClassVar, TypeVar

import msgspec

from profconv.errors import InputError
from profconv.io import read_bytes

Seconds = Annotated[float, msgspec.Meta(ge=0, description="seconds")]
Fraction = Annotated[float, msgspec.Meta(ge=0)]
Count = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]


class Record(msgspec.Struct, kw_only=True):
    """Base of the top-level records; each declares `schema` and `schema_version` as its first fields."""

    SCHEMA: ClassVar[str]
    VERSION: ClassVar[int]
    KIND: ClassVar[str]  # "run", "bench", "parse output": what messages call it

    @classmethod
    def upgrade(cls, doc: dict[str, Any], version: int) -> dict[str, Any]:
        """Bring a document of an older `version` to the current one (each record overrides)."""
        return doc

    def to_json(self) -> str:
        return encode(self)


def _enc_hook(obj: Any) -> Any:
    # numpy scalars (sweep parameters, sizes) without importing numpy here
    item = getattr(obj, "item", None)
    if callable(item):
        return item()
    for base in (str, int, float):  # subclasses such as torch's TorchVersion (a str)
        if isinstance(obj, base):
            return base(obj)
    raise NotImplementedError(f"not JSON serialisable: {type(obj).__name__}")


_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)


def encode(obj: msgspec.Struct) -> str:
    """Indented JSON (one field a line at the top, compact deeper down is not worth the surprise)."""
    return msgspec.json.format(_encoder.encode(obj), indent=1).decode()


R = TypeVar("R", bound=Record)


def decode_json(data: bytes | str, label: str | Path) -> Any:
    """JSON text to builtins, or one line saying why not (bad UTF-8, syntax, nesting)."""
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        if "UTF-8" in str(exc):  # msgspec >= 0.23 ("Invalid UTF-8 encoded string"); before, UnicodeDecodeError
            raise InputError(f"{label}: not a valid JSON record (not UTF-8 text)") from None
        raise InputError(f"{label}: not a valid JSON record ({exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{label}: not a valid JSON record (not UTF-8 text)") from None
    except RecursionError:
        raise InputError(f"{label}: not a valid JSON record (nested too deeply)") from None


def check_version(doc: Any, cls: type[Record], label: str | Path) -> int:
    """The document's schema version as an int, or one line refusing it."""
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if type(version) is not int or version < 1:  # noqa: E721 - bool is an int subclass: refuse true/false
        raise InputError(f"{label}: not a valid {cls.KIND} record (\"schema_version\" must be a positive integer, "
                         f"got {msgspec.json.encode(version).decode()})")
    if version > cls.VERSION:
        raise InputError(f"{label}: {cls.KIND} record schema version {version} is newer than this profconv reads "
                         f"({cls.VERSION}); upgrade profconv")
    return version


def convert(doc: Any, cls: type[R], label: str | Path) -> R:
    """A tagged document (builtins) into `cls`: version checked, upgraded, validated."""
    if not isinstance(doc, dict) or doc.get("schema") != cls.SCHEMA:
        raise InputError(f"{label}: not a profconv {cls.KIND} record (no \"schema\": \"{cls.SCHEMA}\")")
    version = check_version(doc, cls, label)
    if version < cls.VERSION:
        doc = cls.upgrade(dict(doc), version)
        doc["schema_version"] = cls.VERSION
    return validate(doc, cls, label)


T = TypeVar("T")


def validate(doc: Any, cls: type[T], label: str | Path) -> T:
    kind = getattr(cls, "KIND", cls.__name__)
    try:
        obj = msgspec.convert(doc, cls, strict=True)
        check = getattr(obj, "check_read", None)
        if check is not None:
            check()
        return obj
    except msgspec.ValidationError as exc:
        raise InputError(f"{label}: not a valid {kind} record: {exc}") from None
    except ValueError as exc:  # check_read: a free-form part holding a type profconv cannot read
        raise InputError(f"{label}: not a valid {kind} record: {exc}") from None
    except RecursionError:
        raise InputError(f"{label}: not a valid record (nested too deeply)") from None


def read(path: Path, cls: type[R]) -> R:
    return convert(decode_json(read_bytes(path), path), cls, path)


def to_builtins(obj: Any) -> Any:
    return msgspec.to_builtins(obj, enc_hook=_enc_hook)


def struct_from(cls: type[T], mapping: Any) -> T:
    """Build a record part from a plain mapping at write time (what a runner measured), checked the
    same way a reader checks it: a wrong type here is a bug in profconv, so it raises ValueError."""
    try:
        return msgspec.convert(mapping, cls, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{cls.__name__}: {exc}") from None


def check_keys(mapping: dict[str, Any], expected: dict[str, Any], where: str) -> None:
    """The keys of a free-form part (`user`, `settings`) that profconv reads must have the types it reads
    them as (None allowed): a ValueError naming the key and the JSON path of `where` (a record's
    `check_read`, when it is read). Unknown keys are left alone (a newer profconv may add some)."""
    for key, kind in expected.items():
        value = mapping.get(key)
        if value is None:
            continue
        ok = (isinstance(value, kind) and not isinstance(value, bool)) if kind in (int, float, (int, float)) \
            else isinstance(value, kind)
        if isinstance(value, list) and ok and key in LIST_OF_STR:
            ok = all(isinstance(v, str) for v in value)
        if not ok:
            name = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            at, _, part = where.rpartition(".")
            raise ValueError(f"{part}.{key} must be {'a list of strings' if key in LIST_OF_STR else 'a ' + name}, "
                             f"not {type(value).__name__} - at `{at}`")


LIST_OF_STR = {"notes", "argv", "activities"}


Hook = Callable[[dict[str, Any], int], dict[str, Any]]
