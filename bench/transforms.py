"""Transform benchmark: five common SMTs against an empty chain, in one run.

Run ``python -m bench.transforms`` (1M records, 5 rounds) or ``--quick``.

Records are source records with schemaless, JSON-like dict values of ten
fields (ints, strings, a float, a bool), built before any timing. Each round
pushes all of them through

1. an empty chain (the loop, the per-step checks and nothing else), and
2. the chain ``InsertField$Value`` (a static field), ``ReplaceField$Value``
   (exclude one field, rename one), ``MaskField$Value`` (two fields),
   ``Cast$Value`` (one field to int32, one to string) and ``RegexRouter``
   (strip a CDC topic prefix),

with a loop shaped like the runtime's chain (predicate check, drop check per
step). Rounds alternate which chain goes first; medians are reported.
``us_per_record_per_transform`` is (chain time - empty time) / records / 5.
Prints one JSON line. Goal (issue 5): under 2 us per record per transform.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import time
from collections.abc import Sequence

from connectors.api import ConnectRecord, SourceRecord
from transforms.api import Predicate, Transformation
from transforms.cast import CastValue
from transforms.insert_field import InsertFieldValue
from transforms.mask_field import MaskFieldValue
from transforms.regex_router import RegexRouter
from transforms.replace_field import ReplaceFieldValue

Step = tuple[Transformation, Predicate | None, bool]
CHAIN: list[tuple[type[Transformation], dict[str, str]]] = [
    (InsertFieldValue, {"static.field": "pipeline", "static.value": "bench"}),
    (ReplaceFieldValue, {"exclude": "note", "renames": "name:full_name"}),
    (MaskFieldValue, {"fields": "card,email"}),
    (CastValue, {"spec": "amount:int32,id:string"}),
    (RegexRouter, {"regex": r"dbserver1\.inventory\.(.*)", "replacement": "$1"}),
]


def build_chain() -> list[Step]:
    steps: list[Step] = []
    for cls, options in CHAIN:
        transform = cls()
        transform.configure(options)
        steps.append((transform, None, False))
    return steps


def build_records(count: int, distinct: int = 1000) -> list[SourceRecord]:
    """``count`` records cycling through ``distinct`` values (values are never mutated)."""
    now_ms = int(time.time() * 1000)
    templates = [
        SourceRecord(
            topic="dbserver1.inventory.orders",
            partition=0,
            key={"id": i},
            value={
                "id": i,
                "name": f"customer {i}",
                "email": f"c{i}@example.com",
                "card": "4111111111111111",
                "amount": str(100 + i),
                "currency": "EUR",
                "created": now_ms + i,
                "active": i % 2 == 0,
                "score": i / 7,
                "note": "bench",
            },
            timestamp=now_ms + i,
            source_partition={"table": "orders"},
            source_offset={"lsn": i},
        )
        for i in range(distinct)
    ]
    return [templates[i % distinct] for i in range(count)]


def run_chain(steps: Sequence[Step], records: Sequence[SourceRecord]) -> tuple[float, int]:
    """Seconds to push every record through ``steps`` and how many came out."""
    out = 0
    gc.disable()
    start = time.perf_counter()
    for record in records:
        current: ConnectRecord = record
        for transform, predicate, negate in steps:
            if predicate is not None and predicate.test(current) == negate:
                continue
            result = transform.apply(current)
            if result is None:
                break
            current = result
        else:
            out += 1
    elapsed = time.perf_counter() - start
    gc.enable()
    return elapsed, out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200k records, 3 rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.rounds = 200_000, 3
    records = build_records(args.records)
    chain, empty = build_chain(), list[Step]()
    run_chain(chain, records[:10_000])  # warm caches (schema plans, topic routes)
    chain_times: list[float] = []
    empty_times: list[float] = []
    for round_number in range(args.rounds):
        order = [(chain, chain_times), (empty, empty_times)]
        for steps, times in order if round_number % 2 == 0 else reversed(order):
            elapsed, out = run_chain(steps, records)
            if out != len(records):
                raise SystemExit(f"{out} of {len(records)} records came out of the chain")
            times.append(elapsed)
    chain_s, empty_s = statistics.median(chain_times), statistics.median(empty_times)
    per_transform_us = (chain_s - empty_s) / len(records) / len(CHAIN) * 1e6
    result = {
        "bench": "transforms",
        "records": len(records),
        "rounds": args.rounds,
        "transforms": [cls.aliases[-1] for cls, _ in CHAIN],
        "chain_records_per_s": round(len(records) / chain_s),
        "empty_chain_records_per_s": round(len(records) / empty_s),
        "us_per_record_per_transform": round(per_transform_us, 3),
        "goal_us": 2.0,
        "python": platform.python_version(),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
