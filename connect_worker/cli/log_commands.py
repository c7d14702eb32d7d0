"""``sluice topics|produce|consume|groups``: kafka-*.sh-like tools over our client.

Each command talks to any Kafka-protocol broker given by ``--bootstrap-server``
(default ``localhost:9092``), so they work against Sluice's broker and Kafka alike.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any, Literal, TextIO

from connect_worker.cli import progress
from log_engine.client import (
    ConfigResource,
    NewTopic,
    SyncAdmin,
    SyncConsumer,
    SyncProducer,
    TopicPartition,
)
from log_engine.client.errors import KafkaError

DEFAULT_BOOTSTRAP = "localhost:9092"


def add_commands(commands: Any) -> None:
    """Register the sub-commands on the CLI's sub-parser collection."""
    _add_topics(commands)
    produce = commands.add_parser("produce", help="produce lines from stdin to a topic")
    _bootstrap(produce)
    produce.add_argument("topic", help="the topic to write to")
    produce.add_argument("--key-separator", help="split each line into key SEP value")
    produce.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="add this header to every record (repeatable)",
    )
    produce.add_argument(
        "--partition",
        type=int,
        default=None,
        help="write every record to this partition (default: by key, else spread)",
    )
    produce.add_argument(
        "--acks",
        default="all",
        choices=["0", "1", "all"],
        help="the producer's acks setting (default: all)",
    )
    produce.set_defaults(run=run_produce)

    consume = commands.add_parser("consume", help="print a topic's records")
    _bootstrap(consume)
    consume.add_argument("topic", help="the topic to read")
    consume.add_argument(
        "--from-beginning",
        action="store_true",
        help="start at the earliest offset (with --group: when it has none committed)",
    )
    consume.add_argument("--group", help="consume as (and commit for) this group")
    consume.add_argument(
        "--max-messages", type=int, default=None, help="exit after printing this many records"
    )
    consume.add_argument("--timeout-ms", type=int, default=None, help="exit after idling this long")
    consume.add_argument("--print-key", action="store_true", help="print KEY<tab>VALUE")
    consume.add_argument(
        "--print-offset", action="store_true", help="print each record's partition and offset first"
    )
    consume.add_argument(
        "--progress",
        action="store_true",
        help="show progress on stderr (default: when stderr is a terminal and stdout is not)",
    )
    consume.set_defaults(run=run_consume)
    _add_groups(commands)


def _bootstrap(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-b",
        "--bootstrap-server",
        default=DEFAULT_BOOTSTRAP,
        metavar="HOST:PORT",
        help=f"a broker of the cluster (default: {DEFAULT_BOOTSTRAP})",
    )


def _add_topics(commands: Any) -> None:
    topics = commands.add_parser("topics", help="create, list, describe, alter, delete topics")
    actions = topics.add_subparsers(required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="topic names")
    listing.set_defaults(run=run_topics_list)
    create = actions.add_parser("create", help="create a topic")
    create.add_argument("name", help="the topic's name")
    create.add_argument("--partitions", type=int, default=1, help="partition count (default: 1)")
    create.add_argument(
        "--replication-factor", type=int, default=1, help="copies of each partition (default: 1)"
    )
    create.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a topic config, such as cleanup.policy=compact (repeatable)",
    )
    create.set_defaults(run=run_topics_create)
    describe = actions.add_parser("describe", help="partitions, leaders and configs")
    describe.add_argument("names", nargs="*", help="topics to describe (default: all)")
    describe.set_defaults(run=run_topics_describe)
    alter = actions.add_parser("alter", help="add partitions to a topic")
    alter.add_argument("name", help="the topic's name")
    alter.add_argument(
        "--partitions", type=int, required=True, help="the new partition count (only grows)"
    )
    alter.set_defaults(run=run_topics_alter)
    delete = actions.add_parser("delete", help="delete topics")
    delete.add_argument("names", nargs="+", help="topics to delete")
    delete.set_defaults(run=run_topics_delete)
    for parser in (listing, create, describe, alter, delete):
        _bootstrap(parser)


def _add_groups(commands: Any) -> None:
    groups = commands.add_parser("groups", help="list, describe and reset consumer groups")
    actions = groups.add_subparsers(required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="group ids")
    listing.set_defaults(run=run_groups_list)
    describe = actions.add_parser("describe", help="members, offsets and lag per partition")
    describe.add_argument("group", help="the group id")
    describe.set_defaults(run=run_groups_describe)
    reset = actions.add_parser("reset-offsets", help="move a group's committed offsets")
    reset.add_argument("group", help="the group id")
    reset.add_argument("--topic", required=True, help="reset this topic's partitions")
    where = reset.add_mutually_exclusive_group(required=True)
    where.add_argument("--to-earliest", action="store_true", help="to each log start offset")
    where.add_argument("--to-latest", action="store_true", help="to each log end offset")
    where.add_argument("--to-offset", type=int, help="to this offset in every partition")
    reset.add_argument("--execute", action="store_true", help="apply (default: dry run)")
    reset.set_defaults(run=run_groups_reset)
    for parser in (listing, describe, reset):
        _bootstrap(parser)


def _pairs(items: Sequence[str], what: str) -> dict[str, str]:
    result = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"sluice: {what} {item!r} is not KEY=VALUE")
        result[key] = value
    return result


def _admin(args: argparse.Namespace) -> SyncAdmin:
    return SyncAdmin({"bootstrap.servers": args.bootstrap_server})


def run_topics_list(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    with _admin(args) as admin:
        for name in sorted(admin.list_topics()):
            print(name, file=out)
    return 0


def run_topics_create(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    configs = _pairs(args.config, "--config")
    with _admin(args) as admin:
        admin.create_topics(
            [NewTopic(args.name, args.partitions, args.replication_factor, configs)]
        )
    print(f"Created topic {args.name}.", file=out)
    return 0


def run_topics_describe(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    total_bytes: int | None = 0
    total_partitions = 0
    with _admin(args) as admin:
        described = admin.describe_topics(args.names or None)
        resources = [ConfigResource("topic", name) for name in described]
        configs = admin.describe_configs(resources) if resources else {}
        sizes = _leader_sizes(admin, described)
        for name, topic in sorted(described.items()):
            entries = configs.get(ConfigResource("topic", name), {})
            overrides = ",".join(
                f"{k}={e.value}" for k, e in sorted(entries.items()) if not e.is_default
            )
            partitions = sorted(topic.partitions, key=lambda p: p.partition)
            known = [sizes.get(TopicPartition(name, p.partition)) for p in partitions]
            topic_bytes = None if None in known else sum(s for s in known if s is not None)
            print(
                f"Topic: {name}\tPartitionCount: {len(topic.partitions)}\t"
                f"SizeBytes: {_size(topic_bytes)}\tConfigs: {overrides}",
                file=out,
            )
            for p, size in zip(partitions, known, strict=True):
                replicas = ",".join(map(str, p.replicas))
                isr = ",".join(map(str, p.isr))
                print(
                    f"\tTopic: {name}\tPartition: {p.partition}\tLeader: {p.leader}\t"
                    f"Replicas: {replicas}\tIsr: {isr}\tSizeBytes: {_size(size)}",
                    file=out,
                )
            total_partitions += len(partitions)
            total_bytes = None if total_bytes is None or topic_bytes is None else (
                total_bytes + topic_bytes)
        if len(described) > 1:
            print(
                f"Total: {len(described)} topics, {total_partitions} partitions, "
                f"SizeBytes: {_size(total_bytes)}",
                file=out,
            )
    return 0


def _leader_sizes(admin: SyncAdmin, described: dict[str, Any]) -> dict[TopicPartition, int]:
    """Each partition's size in bytes on its leader (DescribeLogDirs, as kafka-log-dirs.sh);
    empty when the cluster does not serve DescribeLogDirs (sizes then print as ``?``)."""
    if not described:
        return {}
    try:
        dirs = admin.describe_log_dirs(described)
    except KafkaError as exc:
        print(f"sluice: partition sizes unknown: {exc}", file=sys.stderr)
        return {}
    sizes: dict[TopicPartition, int] = {}
    for name, topic in described.items():
        for p in topic.partitions:
            tp = TopicPartition(name, p.partition)
            for log_dir in dirs.get(p.leader, []):
                replica = log_dir.replicas.get(tp)
                if replica is not None and not replica.is_future:
                    sizes[tp] = replica.size_bytes
    return sizes


def _size(size_bytes: int | None) -> str:
    return "?" if size_bytes is None else str(size_bytes)


def run_topics_alter(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    with _admin(args) as admin:
        admin.create_partitions({args.name: args.partitions})
    print(f"Topic {args.name} now has {args.partitions} partitions.", file=out)
    return 0


def run_topics_delete(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    with _admin(args) as admin:
        admin.delete_topics(args.names)
    print(f"Deleted {', '.join(args.names)}.", file=out)
    return 0


def run_produce(args: argparse.Namespace, stdin: TextIO = sys.stdin) -> int:
    headers = [(k, v.encode()) for k, v in _pairs(args.header, "--header").items()]
    producer = SyncProducer({"bootstrap.servers": args.bootstrap_server, "acks": args.acks})
    count = 0
    try:
        for line in stdin:
            text = line.rstrip("\n")
            key: bytes | None = None
            if args.key_separator:
                key_text, sep, text = text.partition(args.key_separator)
                if not sep:
                    key_text, text = "", key_text
                key = key_text.encode() if sep else None
            producer.send(args.topic, text.encode(), key, headers or None, args.partition)
            count += 1
        producer.flush(60)
    finally:
        producer.close()
    print(f"Produced {count} records to {args.topic}.", file=sys.stderr)
    return 0


def run_consume(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    config: dict[str, Any] = {
        "bootstrap.servers": args.bootstrap_server,
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
        "enable.auto.commit": False,  # commit exactly what was printed, on exit
    }
    if args.group:
        config["group.id"] = args.group
    consumer = SyncConsumer(config)
    printed = 0
    consumed: dict[TopicPartition, int] = {}  # what was printed, to commit exactly that
    shown = progress.counting(
        f"consuming {args.topic}", args.max_messages,
        enabled=progress.wanted(getattr(args, "progress", False), stdout=out),
    )
    with shown as advance:
        try:
            _start(consumer, args)
            for record in _records(consumer, args.timeout_ms):
                parts = []
                if args.print_offset:
                    parts.append(f"{record.partition}:{record.offset}")
                if args.print_key:
                    parts.append(_text(record.key))
                parts.append(_text(record.value))
                print("\t".join(parts), file=out, flush=True)
                printed += 1
                advance(1)
                consumed[TopicPartition(record.topic, record.partition)] = record.offset + 1
                if args.max_messages is not None and printed >= args.max_messages:
                    break
        except KeyboardInterrupt:
            pass
        finally:
            if args.group and consumed:
                consumer.commit(consumed)
            consumer.close()
    print(f"Processed {printed} messages.", file=sys.stderr)
    return 0


def _start(consumer: SyncConsumer, args: argparse.Namespace) -> None:
    if args.group:
        consumer.subscribe([args.topic])
        return
    with SyncAdmin({"bootstrap.servers": args.bootstrap_server}) as admin:
        topic = admin.describe_topics([args.topic])[args.topic]
    partitions = [TopicPartition(args.topic, p.partition) for p in topic.partitions]
    consumer.assign(partitions)
    if args.from_beginning:
        consumer.seek_to_beginning(partitions)
    else:
        consumer.seek_to_end(partitions)


def _records(consumer: SyncConsumer, timeout_ms: int | None) -> Iterator[Any]:
    """Records as they come; with ``timeout_ms``, stop after that long without any.

    The idle clock starts once partitions are assigned, so a group join (which
    may wait ``group.initial.rebalance.delay.ms``) does not count as idle time.
    """
    idle_since = time.monotonic()
    while True:
        batch = consumer.poll(0.5)
        if batch or not consumer.assignment():
            idle_since = time.monotonic()
            yield from batch
        elif timeout_ms is not None and (time.monotonic() - idle_since) * 1000 >= timeout_ms:
            return


def _text(data: bytes | None) -> str:
    return "null" if data is None else data.decode("utf-8", errors="replace")


def run_groups_list(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    with _admin(args) as admin:
        for group in sorted(admin.list_groups(), key=lambda g: g.group_id):
            print(group.group_id, file=out)
    return 0


def run_groups_describe(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    with _admin(args) as admin:
        group = admin.describe_groups([args.group])[args.group]
        committed = admin.list_consumer_group_offsets(args.group)
        ends = admin.list_offsets(dict.fromkeys(committed, "latest")) if committed else {}
        owners = {tp: m.client_id for m in group.members for tp in m.assignment}
        print(f"Group: {args.group}\tState: {group.state}\tMembers: {len(group.members)}", file=out)
        print("TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER", file=out)
        for tp in sorted(committed):
            current = committed[tp].offset
            end = ends[tp][0]
            lag = end - current if current >= 0 else end
            print(
                f"{tp.topic}\t{tp.partition}\t{current}\t{end}\t{lag}\t{owners.get(tp, '-')}",
                file=out,
            )
    return 0


def run_groups_reset(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    with _admin(args) as admin:
        topic = admin.describe_topics([args.topic])[args.topic]
        partitions = [TopicPartition(args.topic, p.partition) for p in topic.partitions]
        if args.to_offset is not None:
            targets = dict.fromkeys(partitions, args.to_offset)
        else:
            spec: Literal["earliest", "latest"] = "earliest" if args.to_earliest else "latest"
            targets = {
                tp: found[0]
                for tp, found in admin.list_offsets(dict.fromkeys(partitions, spec)).items()
            }
        if args.execute:
            admin.alter_consumer_group_offsets(args.group, targets)
        print("TOPIC\tPARTITION\tNEW-OFFSET", file=out)
        for tp in sorted(targets):
            print(f"{tp.topic}\t{tp.partition}\t{targets[tp]}", file=out)
        if not args.execute:
            print("(dry run: add --execute to apply)", file=out)
    return 0
