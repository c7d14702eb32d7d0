"""A small schema DSL: each message declared once, compiled once per version.

A message declares its valid versions and the version where it becomes
flexible (KIP-482: ``Message(..., flexible=9)``; None = never). Compiling a
flexible version picks the compact form of every string, bytes, records and
array field, and ends every struct (the body, nested structs, array items)
with a tagged-field section: fields declared with ``tag=N`` are read from and
written to that section (written only when they differ from their default);
unknown tags are skipped when reading; an empty section is the byte ``00``.

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

from log_engine.errors import EncodeError, ProtocolDecodeError
from log_engine.invariants import check
from log_engine.protocol.types import (
    EMPTY_TAGGED_FIELDS,
    ArrayOf,
    Codec,
    CompactArrayOf,
    FieldType,
    Reader,
    Writer,
    compact_variant,
    nullable_variant,
)

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


@dataclass(frozen=True, slots=True, init=False)
class Struct:
    """Declares a single nested struct (not an array), given as its fields.

    Kafka uses these mostly as tagged fields (Fetch's ``DivergingEpoch``); give
    such a field a dict default so it is written only when it differs.
    """

    fields: tuple[Field, ...]

    def __init__(self, fields: Sequence[Field]) -> None:
        object.__setattr__(self, "fields", tuple(fields))


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message or struct, as declared for all versions at once."""

    name: str
    type: FieldType | Array | Struct
    versions: VersionRange = ALL_VERSIONS
    nullable: VersionRange | None = None
    default: Any = NO_DEFAULT
    tag: int | None = None
    """In flexible versions, the field lives in the tagged-field section under this tag."""

    def default_value(self) -> Any:
        """The spec default, else the type's zero value (arrays: a new empty list)."""
        if self.default is not NO_DEFAULT:
            return self.default
        if isinstance(self.type, Array):
            return []
        if isinstance(self.type, Struct):
            return {}
        return self.type.zero


_ReadOp = Callable[[Reader, dict[str, Any]], None]
_WriteOp = Callable[[Writer, Mapping[str, Any]], None]
_ENCODE_FAILURES = (struct.error, ValueError, TypeError, AttributeError, OverflowError)


class CompiledStruct:
    """A struct (or a whole message body) at one version: read and write a dict.

    ``fields`` are the ``(name, codec, default)`` triples the version carries, in
    wire order; ``absent`` maps the fields it lacks to their defaults. In a
    ``flexible`` version the struct ends with a tagged-field section holding
    the ``tagged`` fields (``tag -> (name, codec, default)``).
    """

    __slots__ = (
        "_lists",
        "_read_ops",
        "_write_ops",
        "absent",
        "fields",
        "flexible",
        "name",
        "size_min",
        "tagged",
    )

    fmt = ""
    nullable = False

    def __init__(
        self,
        name: str,
        fields: Sequence[tuple[str, Codec, Any]],
        absent: Mapping[str, Any],
        *,
        flexible: bool = False,
        tagged: Mapping[int, tuple[str, Codec, Any]] | None = None,
    ) -> None:
        self.name = name
        self.fields = tuple(fields)
        self.absent = dict(absent)
        self.flexible = flexible
        self.tagged = dict(sorted((tagged or {}).items()))
        check(flexible or not self.tagged, f"{name}: tagged fields in a classic version")
        self._lists = tuple(key for key, value in self.absent.items() if isinstance(value, list))
        self.size_min = sum(codec.size_min for _, codec, _ in self.fields) + int(flexible)
        reads, writes = _build_ops(self.fields)
        if flexible:
            reads += (_tag_section_reader(name, self.tagged),)
            writes += (_tag_section_writer(self.tagged),)
        self._read_ops, self._write_ops = reads, writes

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
        for name, codec, default in (*self.fields, *self.tagged.values()):
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


def _tag_section_reader(name: str, tagged: Mapping[int, tuple[str, Codec, Any]]) -> _ReadOp:
    if not tagged:

        def skip_all(reader: Reader, out: dict[str, Any]) -> None:
            pos = reader.pos
            if pos < reader.end and reader.buf[pos] == 0:
                reader.pos = pos + 1  # the common case: no tagged fields
            else:
                reader.tagged_fields()  # unknown tags: read past them

        return skip_all

    def read(reader: Reader, out: dict[str, Any]) -> None:
        for _, (field_name, _, default) in tagged.items():
            out[field_name] = [] if isinstance(default, list) else default
        for tag, data in reader.tagged_fields():
            known = tagged.get(tag)
            if known is None:
                continue
            field_name, codec, _ = known
            sub = Reader(data)
            out[field_name] = codec.read(sub)
            if sub.remaining:
                raise ProtocolDecodeError(f"{name}.{field_name}: {sub.remaining} extra bytes")

    return read


def _tag_section_writer(tagged: Mapping[int, tuple[str, Codec, Any]]) -> _WriteOp:
    if not tagged:

        def write_empty(writer: Writer, value: Mapping[str, Any]) -> None:
            writer.buf += EMPTY_TAGGED_FIELDS

        return write_empty

    def write(writer: Writer, value: Mapping[str, Any]) -> None:
        present: list[tuple[int, bytes]] = []
        for tag, (field_name, codec, default) in tagged.items():
            item = value.get(field_name, default)
            if item == default:
                continue  # Kafka writes a tagged field only when it is not its default
            sub = Writer(inline=True)
            codec.write(sub, item)
            present.append((tag, bytes(sub.buf)))
        writer.tagged_fields(present)

    return write


def compile_struct(
    name: str, fields: Sequence[Field], version: int, flexible: bool = False
) -> CompiledStruct:
    """Compile the fields ``version`` carries (nested structs too)."""
    present: list[tuple[str, Codec, Any]] = []
    tagged: dict[int, tuple[str, Codec, Any]] = {}
    absent: dict[str, Any] = {}
    for spec in fields:
        if not in_range(version, spec.versions) or (spec.tag is not None and not flexible):
            absent[spec.name] = spec.default_value()
            continue
        codec = _codec_for(f"{name}.{spec.name}", spec, version, flexible)
        default = spec.default_value()
        check(
            default is not None or getattr(codec, "nullable", False),
            f"{name}.{spec.name} v{version}: default None but the field is not nullable",
        )
        if spec.tag is not None:
            check(spec.tag not in tagged, f"{name}: tag {spec.tag} declared twice")
            tagged[spec.tag] = (spec.name, codec, default)
        else:
            present.append((spec.name, codec, default))
    return CompiledStruct(name, present, absent, flexible=flexible, tagged=tagged)


def _codec_for(path: str, spec: Field, version: int, flexible: bool) -> Codec:
    nullable = in_range(version, spec.nullable)
    kind = spec.type
    if isinstance(kind, Struct):
        return compile_struct(path, kind.fields, version, flexible)
    if isinstance(kind, Array):
        item: Codec
        if isinstance(kind.item, FieldType):
            item = compact_variant(kind.item) if flexible else kind.item
        else:
            item = compile_struct(path, kind.item, version, flexible)
        return (CompactArrayOf if flexible else ArrayOf)(item, nullable=nullable)
    codec = nullable_variant(kind) if nullable else kind
    return compact_variant(codec) if flexible else codec


@dataclass(frozen=True, eq=False)
class Message:
    """A request or response body, declared once for all its versions.

    ``versions`` is the range this declaration covers; versions from
    ``flexible`` on (None: none) use the flexible encoding. :meth:`schema`
    compiles one version on first use and caches it.
    """

    name: str
    api_key: int
    versions: tuple[int, int]
    fields: tuple[Field, ...]
    flexible: int | None = None
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
            compiled = self._compiled[version] = compile_struct(
                self.name, self.fields, version, self.is_flexible(version)
            )
        return compiled

    def is_flexible(self, version: int) -> bool:
        """Whether ``version`` uses the flexible encoding (and header v2 / v1)."""
        return self.flexible is not None and version >= self.flexible
