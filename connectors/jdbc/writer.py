"""Turn a batch of sink records into SQL statements, inside the caller's transaction.

Records are taken in order and cut into runs that share a table, an operation
(insert / upsert / update / delete) and a column list; each run is one
statement: COPY or ``executemany`` of up to ``batch.size`` rows. Order between
runs is kept, so an upsert followed by a tombstone of the same key ends with
the row deleted.

Rows are built per ``pk.mode``:

- ``none`` / ``record_value``: the value's fields;
- ``kafka``: ``__connect_topic``, ``__connect_partition``, ``__connect_offset``
  (or the three ``pk.fields``) then the value's fields;
- ``record_key``: the key's fields (a struct key) or the key itself (a
  primitive key, column ``pk.fields`` or ``__connect_key``), then the value's
  other fields.

``quote.sql.identifiers=never`` writes names bare: columns are compared with
the catalog's names as the database folds them (PostgreSQL: lower case).

``fields.whitelist`` (``fields.include.list``) narrows the value's fields (key
columns are kept); it is applied once per shape, so rows cost the same.

Tables are looked up once (cached); a missing table is created when
``auto.create`` (from the record schemas, or types inferred from schemaless
values), missing columns are added when ``auto.evolve``. DDL runs in the same
transaction as the rows, so a rolled back batch forgets what it created
(:meth:`SinkWriter.rollback`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from connectors.api import ConnectError, DataError, Schema, SchemaType, SinkRecord
from connectors.jdbc.config import JdbcSinkConfig
from connectors.jdbc.dialect import Dialect, TableId
from connectors.jdbc.types import infer_schema

KAFKA_PK = ("__connect_topic", "__connect_partition", "__connect_offset")
PRIMITIVE_KEY = "__connect_key"
SHAPES_MAX = 1024
_KAFKA_SCHEMAS = (
    Schema(SchemaType.STRING),
    Schema(SchemaType.INT32),
    Schema(SchemaType.INT64),
)


@dataclass(frozen=True, slots=True)
class _Shape:
    """How to turn records of one kind into rows, and the statement for them."""

    table: TableId
    op: str  # insert | upsert | update | delete | noop (a tombstone for a missing table)
    columns: tuple[str, ...]
    pk: tuple[str, ...]
    row: Callable[[SinkRecord], tuple[Any, ...]]


@dataclass(slots=True)
class WriteCounts:
    """What one ``write`` did."""

    rows: int = 0
    deletes: int = 0
    skipped: int = 0


class SinkWriter:
    """Writes records to tables through one connection; the caller owns the transaction."""

    def __init__(self, dialect: Dialect, conn: Any, config: JdbcSinkConfig) -> None:
        self.dialect = dialect
        self.conn = conn
        self.config = config
        self._tables: dict[TableId, set[str]] = {}
        self._new_tables: set[TableId] = set()
        self._table_of: dict[str, TableId] = {}
        self._shapes: dict[tuple[Any, ...], tuple[_Shape, Any, Any]] = {}
        self._sql: dict[tuple[TableId, str, tuple[str, ...]], str] = {}
        self._adapt = dialect.adapt(None)
        self._fields = frozenset(config.field_list())  # fields.whitelist; empty: all

    # ------------------------------------------------------------ public

    def write(self, records: Sequence[SinkRecord]) -> WriteCounts:
        """Write ``records`` in order (in the open transaction); DataError for a bad record."""
        counts = WriteCounts()
        run: list[tuple[Any, ...]] = []
        shape: _Shape | None = None
        # Fast path: a record like the previous one (same topic, same schema objects, a
        # struct value) has the previous shape; no lookup per record.
        last_topic: str | None = None
        last_schema: Any = None
        last_key_schema: Any = None
        for record in records:
            if (
                record.value_schema is last_schema
                and last_schema is not None
                and record.topic == last_topic
                and record.key_schema is last_key_schema
                and type(record.value) is dict
            ):
                next_shape = shape
            else:
                next_shape = self._shape_for(record)
                last_topic, last_schema = record.topic, record.value_schema
                last_key_schema = record.key_schema
                if next_shape is not None and next_shape.op == "delete":
                    last_schema = None  # tombstones have no schema: never the fast path
            if next_shape is None or next_shape.op == "noop":
                counts.skipped += 1
                continue
            if next_shape is not shape:
                if shape is not None and run:
                    self._flush(shape, run, counts)
                shape, run = next_shape, []
            try:
                run.append(shape.row(record))
            except (KeyError, TypeError, AttributeError) as exc:
                raise DataError(
                    f"record {record.topic}-{record.partition}@{record.kafka_offset} does not "
                    f"fit table {shape.table}: {type(exc).__name__}: {exc}"
                ) from None
            if len(run) >= self.config.batch_size:
                self._flush(shape, run, counts)
                run = []
        if shape is not None and run:
            self._flush(shape, run, counts)
        return counts

    def rollback(self) -> None:
        """The transaction was rolled back: forget tables and columns it created."""
        for table in self._new_tables:
            self._tables.pop(table, None)
        self._new_tables.clear()
        self._shapes.clear()

    def committed(self) -> None:
        self._new_tables.clear()

    def table_for(self, topic: str) -> TableId:
        table = self._table_of.get(topic)
        if table is None:
            name = self.config.table_name_format.replace("${topic}", topic)
            table = self._table_of[topic] = TableId.parse(name)
        return table

    # ------------------------------------------------------------ shapes

    def _shape_for(self, record: SinkRecord) -> _Shape | None:
        value = record.value
        if value is None:
            if not self.config.delete_enabled or record.key is None:
                return None
            op = "delete"
        elif type(value) is not dict:
            raise DataError(
                f"JdbcSink needs struct values (dicts, e.g. from JsonConverter); record "
                f"{record.topic}-{record.partition}@{record.kafka_offset} has a "
                f"{type(value).__name__}"
            )
        else:
            op = self.config.insert_mode
        # Schemas hold dicts (unhashable): key on their identity, keeping them alive in the
        # cache entry so an id cannot be reused while it is there.
        schema = record.value_schema
        value_key: Any = id(schema) if schema is not None else (tuple(value) if value else ())
        key_key: Any = None
        key_schema = record.key_schema
        if self.config.pk_mode == "record_key":
            key = record.key
            key_key = id(key_schema) if key_schema is not None else (
                tuple(key) if type(key) is dict else type(key)
            )
        cache_key = (record.topic, op, value_key, key_key)
        cached = self._shapes.get(cache_key)
        if cached is None or cached[1] is not schema or cached[2] is not key_schema:
            if len(self._shapes) >= SHAPES_MAX:  # schemas are new objects each time: bound it
                self._shapes.clear()
            cached = self._shapes[cache_key] = (self._make_shape(record, op), schema, key_schema)
        return cached[0]

    def _make_shape(self, record: SinkRecord, op: str) -> _Shape:
        table = self.table_for(record.topic)
        key_cols, key_schemas, key_row = self._key_part(record)
        if op == "delete" and not self._table_exists(table):
            return _Shape(table, "noop", (), (), _empty_row)  # nothing to delete from
        value = record.value if op != "delete" else {}
        pk_value = self.config.pk_field_list() if self.config.pk_mode == "record_value" else []
        if self.config.pk_mode == "record_value" and not pk_value:
            pk_value = [c for c in value if not self._fields or c in self._fields]
        value_cols = [c for c in value if c not in key_cols]
        schema = record.value_schema
        if self._fields and op != "delete":
            value_cols = self._allowed(record, key_cols, value_cols, pk_value)
        value_schemas = [self._field_schema(schema, c, value.get(c)) for c in value_cols]
        pk = list(key_cols) if self.config.pk_mode in ("kafka", "record_key") else pk_value
        columns = (*key_cols, *value_cols)
        if op != "delete":
            self._ensure_table(table, columns, (*key_schemas, *value_schemas), pk)
        get_value = _getter(value_cols)
        adapt = self._adapt

        def row(rec: SinkRecord) -> tuple[Any, ...]:
            values = key_row(rec) + (get_value(rec.value) if value_cols else ())
            return tuple(map(adapt, values)) if adapt is not None else values

        if key_row is _empty_row and adapt is None:  # the common case: the value's fields

            def row(rec: SinkRecord) -> tuple[Any, ...]:
                return get_value(rec.value)

        if op == "delete":
            return _Shape(table, op, tuple(key_cols), tuple(key_cols), row)
        if op == "update":  # parameters: non-key columns, then the key
            others = [c for c in columns if c not in pk]
            order = itemgetter(*[columns.index(c) for c in (*others, *pk)])

            def update_row(rec: SinkRecord) -> tuple[Any, ...]:
                full = row(rec)
                picked = order(full)
                return picked if isinstance(picked, tuple) else (picked,)

            return _Shape(table, op, tuple(columns), tuple(pk), update_row)
        return _Shape(table, op, tuple(columns), tuple(pk), row)

    def _allowed(
        self, record: SinkRecord, key_cols: list[str], value_cols: list[str], pk_value: list[str]
    ) -> list[str]:
        """The value columns ``fields.whitelist`` keeps (record_value keys stay too)."""
        schema = record.value_schema
        if schema is not None and schema.type is SchemaType.STRUCT:
            have = {f.name for f in schema.fields}
        else:
            have = set(record.value)
        missing = sorted(f for f in self._fields if f not in have and f not in key_cols)
        if missing:
            raise DataError(
                f"record {record.topic}-{record.partition}@{record.kafka_offset} has no "
                f"field(s) {', '.join(missing)} of fields.whitelist"
            )
        keep = self._fields.union(pk_value)
        return [c for c in value_cols if c in keep]

    def _key_part(
        self, record: SinkRecord
    ) -> tuple[list[str], list[Schema], Callable[[SinkRecord], tuple[Any, ...]]]:
        mode = self.config.pk_mode
        if mode == "kafka":
            names = self.config.pk_field_list() or list(KAFKA_PK)
            return names, list(_KAFKA_SCHEMAS), _kafka_row
        if mode != "record_key":
            return [], [], _empty_row
        key = record.key
        if key is None:
            raise DataError(
                f"pk.mode=record_key but record {record.topic}-{record.partition}@"
                f"{record.kafka_offset} has no key"
            )
        wanted = self.config.pk_field_list()
        if type(key) is dict:
            names = wanted or list(key)
            schemas = [self._field_schema(record.key_schema, n, key.get(n)) for n in names]
            get = _getter(names)
            return names, schemas, lambda rec: get(rec.key)
        if len(wanted) > 1:
            raise DataError(f"a primitive key fills one pk.fields column, not {wanted}")
        schema = record.key_schema or infer_schema(key)
        return [wanted[0] if wanted else PRIMITIVE_KEY], [schema], lambda rec: (rec.key,)

    @staticmethod
    def _field_schema(schema: Schema | None, name: str, sample: Any) -> Schema:
        if schema is not None and schema.type is SchemaType.STRUCT:
            field = schema.field(name)
            if field is not None:
                return field.schema
        return infer_schema(sample)

    # ------------------------------------------------------------ tables

    def _table_exists(self, table: TableId) -> bool:
        if table in self._tables:
            return True
        found = self.dialect.columns(self.conn, table)
        if found is not None:
            self._tables[table] = {c.name for c in found}
        return found is not None

    def _ensure_table(
        self,
        table: TableId,
        columns: Sequence[str],
        schemas: Sequence[Schema],
        pk: Sequence[str],
    ) -> None:
        known = self._tables.get(table)
        if known is None:
            found = self.dialect.columns(self.conn, table)
            if found is None:
                if not self.config.auto_create:
                    raise ConnectError(
                        f"table {table} does not exist on {self.dialect.url.describe()} "
                        "and auto.create=false"
                    )
                self._create(table, columns, schemas, pk)
                return
            known = self._tables[table] = {c.name for c in found}
        fold = self.dialect.fold  # quote.sql.identifiers=never: Amount is column amount
        missing = [
            (c, s) for c, s in zip(columns, schemas, strict=True) if fold(c) not in known
        ]
        if not missing:
            return
        if not self.config.auto_evolve:
            raise DataError(
                f"table {table} has no column(s) {', '.join(c for c, _ in missing)} "
                "and auto.evolve=false"
            )
        for name, schema in missing:
            self.conn.execute(self.dialect.add_column_sql(table, name, schema))
            known.add(fold(name))
        self._new_tables.add(table)

    def _create(
        self, table: TableId, columns: Sequence[str], schemas: Sequence[Schema], pk: Sequence[str]
    ) -> None:
        if table.schema and self.dialect.name.value == "postgresql":
            self.conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.dialect.quote(table.schema)}")
        sql = self.dialect.create_table_sql(table, list(zip(columns, schemas, strict=True)), pk)
        self.conn.execute(sql)
        self._tables[table] = {self.dialect.fold(c) for c in columns}
        self._new_tables.add(table)
        self._shapes.clear()  # tombstones for this table were no-ops until now

    # ------------------------------------------------------------ statements

    def _flush(self, shape: _Shape, rows: list[tuple[Any, ...]], counts: WriteCounts) -> None:
        dialect, table = self.dialect, shape.table
        if shape.op == "insert":
            dialect.insert_rows(self.conn, table, shape.columns, rows)
        else:
            sql_key = (table, shape.op, shape.columns)
            sql = self._sql.get(sql_key)
            if sql is None:
                sql = self._sql[sql_key] = self._statement(shape)
            dialect.execute_many(self.conn, sql, rows)
        if shape.op == "delete":
            counts.deletes += len(rows)
        else:
            counts.rows += len(rows)

    def _statement(self, shape: _Shape) -> str:
        dialect, table, columns, pk = self.dialect, shape.table, shape.columns, shape.pk
        if shape.op == "upsert":
            return dialect.upsert_sql(table, columns, pk)
        if shape.op == "update":
            return dialect.update_sql(table, columns, pk)
        return dialect.delete_sql(table, pk)


def _getter(names: Sequence[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A fast ``dict -> tuple of values`` for ``names`` (missing keys give None)."""
    if not names:
        return lambda value: ()
    picker = itemgetter(*names)
    single = len(names) == 1

    def get(value: Any) -> tuple[Any, ...]:
        try:
            picked = picker(value)
        except KeyError:
            return tuple(value.get(n) for n in names)
        return (picked,) if single else picked

    return get


def _kafka_row(rec: SinkRecord) -> tuple[Any, ...]:
    return (rec.topic, rec.partition, rec.kafka_offset)


def _empty_row(rec: SinkRecord) -> tuple[Any, ...]:
    return ()
