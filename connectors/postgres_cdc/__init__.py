"""PostgreSQL CDC source: Debezium-compatible change events from a pgoutput slot.

The events follow the Debezium release named by :data:`.tables.DEBEZIUM_VERSION`
(3.6.1.Final, also ``source.version``): envelope and source fields, their order
and optionality, and the value encodings.

Modules, one concept each::

    source       PostgresCdcConnector (Debezium's class name), check(), one task
    config       the keys (Debezium's names and defaults)
    task         start-up decisions, snapshot then streaming, acknowledgement
    preflight    problems found on the server (wal_level, tables, publication, slot)
    publication  publication.autocreate.mode
    connections  libpq connections (UTC, ISO dates) and clear connection errors
    stream       the replication connection: slot commands, COPY BOTH, status updates
    pgoutput     the pgoutput protocol parser
    decoder      pgoutput messages -> change records, resume skipping
    positions    which LSN may be confirmed once records are acknowledged
    snapshot     the consistent initial snapshot (exported snapshot, cursors, progress)
    catalog      catalog queries (tables, columns, primary keys, estimates)
    tables       a table version and its Key/Value/Envelope schemas
    values       PostgreSQL types -> Debezium's Connect types, text parsers
    events       SourceRecords: envelope, source block, tombstones, heartbeats
"""
