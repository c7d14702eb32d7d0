"""A small schema DSL: each message declared once, compiled once per version.

A :class:`Message` lists its :class:`Field` s in wire order; each field carries
the versions that have it (``versions=(lo, hi)``, ``hi=None`` for open-ended),
the versions where it may be null, and its default::

    Field("throttle_time_ms", INT32, versions=(1, None))
    Field("topics", Array([Field("name", STRING)]), nullable=(1, None))

``message.schema(version)`` compiles (and caches) a :class:`CompiledStruct`: the
fields that version carries, in wire order, with runs of fixed-width fields
merged into one ``struct.Struct`` each, and the defaults of the fields it lacks.
That compiled field list is "one schema per version".

Bodies are plain dicts keyed by snake_case field names; nested structs are
dicts, arrays lists. Decoding fills fields the version lacks with their default
(so a handler reads ``body["rack_id"]`` without branching on the version);
encoding takes missing keys as their default and ignores keys the version
lacks. A field's default is the spec's ``default`` or else the type's zero
(0, False, "", b"", [] for arrays, None for records).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from log_engine.invariants import check
from log_engine.protocol.errors import EncodeError
from log_engine.protocol.types import ArrayOf, Codec, FieldType, Reader, Writer, nullable_variant

VersionRange = tuple[int, int | None]
ALL_VERSIONS: VersionRange = (0, None)


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


def in_range(version: int, versions: VersionRange | None) -> bool:
    """Whether ``version`` lies in an inclusive range (None = no versions)."""
    if versions is None:
        return False
    lo, hi = versions
    return lo <= version and (hi is None or version <= hi)


@dataclass(frozen=True, slots=True, init=False)
class Array:
    """Declares ``[]T``: of a primitive type, or of a struct given as its fields."""

    item: FieldType | tuple[Field, ...]

    def __init__(self, item: FieldType | Sequence[Field]) -> None:
        value = item if isinstance(item, FieldType) else tuple(item)
        object.__setattr__(self, "item", value)


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message or struct, as declared for all versions at once."""

    name: str
    type: FieldType | Array
    versions: VersionRange = ALL_VERSIONS
    nullable: VersionRange | None = None
    default: Any = NO_DEFAULT

    def default_value(self) -> Any:
        """The spec default, else the type's zero value (arrays: a new empty list)."""
        if self.default is not NO_DEFAULT:
            return self.default
        if isinstance(self.type, Array):
            return []
        return self.type.zero


_ReadOp = Callable[[Reader, dict[str, Any]], None]
_WriteOp = Callable[[Writer, Mapping[str, Any]], None]
_ENCODE_FAILURES = (struct.error, ValueError, TypeError, AttributeError, OverflowError)


class CompiledStruct:
    """A struct (or a whole message body) at one version: read and write a dict.

    ``fields`` are the ``(name, codec, default)`` triples the version carries, in
    wire order; ``absent`` maps the fields it lacks to their defaults.
    """

    __slots__ = ("_lists", "_read_ops", "_write_ops", "absent", "fields", "name", "size_min")

    fmt = ""
    nullable = False

    def __init__(
        self,
        name: str,
        fields: Sequence[tuple[str, Codec, Any]],
        absent: Mapping[str, Any],
    ) -> None:
        self.name = name
        self.fields = tuple(fields)
        self.absent = dict(absent)
        self._lists = tuple(key for key, value in self.absent.items() if isinstance(value, list))
        self.size_min = sum(codec.size_min for _, codec, _ in self.fields)
        self._read_ops, self._write_ops = _build_ops(self.fields)

    def __repr__(self) -> str:
        return f"<CompiledStruct {self.name}: {', '.join(n for n, _, _ in self.fields)}>"

    def read(self, reader: Reader) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for op in self._read_ops:
            op(reader, out)
        if self.absent:  # after the wire fields, so a printed body reads in wire order
            out.update(self.absent)
            for key in self._lists:
                out[key] = []  # never share a default list between bodies
        return out

    def write(self, writer: Writer, value: Mapping[str, Any]) -> None:
        try:
            for op in self._write_ops:
                op(writer, value)
        except EncodeError:
            raise  # a nested struct already named the field
        except _ENCODE_FAILURES as exc:
            raise self._explain(value, exc) from exc

    def _explain(self, value: Any, exc: Exception) -> EncodeError:
        """Find the field that failed (slow path, errors only) and name it."""
        if not isinstance(value, Mapping):
            return EncodeError(f"{self.name}: expected a dict, got {type(value).__name__}")
        for name, codec, default in self.fields:
            item = value.get(name, default)
            try:
                codec.write(Writer(), item)
            except EncodeError as inner:
                return inner
            except _ENCODE_FAILURES as inner:
                return EncodeError(f"{self.name}.{name}: {inner} (value {item!r:.80})")
        return EncodeError(f"{self.name}: {exc}")


def _build_ops(
    fields: Sequence[tuple[str, Codec, Any]],
) -> tuple[tuple[_ReadOp, ...], tuple[_WriteOp, ...]]:
    """Turn a field list into read/write steps, merging fixed-width runs."""
    reads: list[_ReadOp] = []
    writes: list[_WriteOp] = []
    run: list[tuple[str, str, Any]] = []

    def flush() -> None:
        if run:
            names = tuple(name for name, _, _ in run)
            defaults = tuple(default for _, _, default in run)
            packer = struct.Struct(">" + "".join(fmt for _, fmt, _ in run))
            reads.append(_fixed_reader(names, packer))
            writes.append(_fixed_writer(names, defaults, packer))
            run.clear()

    for name, codec, default in fields:
        if codec.fmt:
            run.append((name, codec.fmt, default))
            continue
        flush()
        reads.append(_single_reader(name, codec.read))
        writes.append(_single_writer(name, default, codec.write))
    flush()
    return tuple(reads), tuple(writes)


def _fixed_reader(names: tuple[str, ...], packer: struct.Struct) -> _ReadOp:
    def read(reader: Reader, out: dict[str, Any]) -> None:
        out.update(zip(names, reader.unpack(packer), strict=True))

    return read


def _fixed_writer(
    names: tuple[str, ...], defaults: tuple[Any, ...], packer: struct.Struct
) -> _WriteOp:
    def write(writer: Writer, value: Mapping[str, Any]) -> None:
        writer.buf += packer.pack(*map(value.get, names, defaults))

    return write


def _single_reader(name: str, read_value: Callable[[Reader], Any]) -> _ReadOp:
    def read(reader: Reader, out: dict[str, Any]) -> None:
        out[name] = read_value(reader)

    return read


def _single_writer(name: str, default: Any, write_value: Callable[[Writer, Any], None]) -> _WriteOp:
    def write(writer: Writer, value: Mapping[str, Any]) -> None:
        write_value(writer, value.get(name, default))

    return write


def compile_struct(name: str, fields: Sequence[Field], version: int) -> CompiledStruct:
    """Compile the fields ``version`` carries (nested structs too)."""
    present: list[tuple[str, Codec, Any]] = []
    absent: dict[str, Any] = {}
    for spec in fields:
        if not in_range(version, spec.versions):
            absent[spec.name] = spec.default_value()
            continue
        codec = _codec_for(f"{name}.{spec.name}", spec, version)
        default = spec.default_value()
        check(
            default is not None or getattr(codec, "nullable", False),
            f"{name}.{spec.name} v{version}: default None but the field is not nullable",
        )
        present.append((spec.name, codec, default))
    return CompiledStruct(name, present, absent)


def _codec_for(path: str, spec: Field, version: int) -> Codec:
    nullable = in_range(version, spec.nullable)
    kind = spec.type
    if isinstance(kind, Array):
        item: Codec
        if isinstance(kind.item, FieldType):
            item = kind.item
        else:
            item = compile_struct(path, kind.item, version)
        return ArrayOf(item, nullable=nullable)
    return nullable_variant(kind) if nullable else kind


@dataclass(frozen=True, eq=False)
class Message:
    """A request or response body, declared once for its classic versions.

    ``versions`` is the range this declaration covers (non-flexible versions
    only); :meth:`schema` compiles one of them on first use and caches it.
    """

    name: str
    api_key: int
    versions: tuple[int, int]
    fields: tuple[Field, ...]
    _compiled: dict[int, CompiledStruct] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))

    def schema(self, version: int) -> CompiledStruct:
        """The compiled field list of ``version`` (ValueError outside ``versions``)."""
        compiled = self._compiled.get(version)
        if compiled is None:
            lo, hi = self.versions
            if not lo <= version <= hi:
                raise ValueError(f"{self.name} has no version {version} (declared {lo}-{hi})")
            compiled = self._compiled[version] = compile_struct(self.name, self.fields, version)
        return compiled
