"""A streaming query over the sluice source that the Spark tests start the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def available_now_stream(
    spark: Any, bootstrap: str, topic: str, out: Path, columns: tuple[str, ...],
    **options: str,
) -> Any:
    """Read ``topic`` from the earliest offset into parquet under ``out`` (checkpointed
    there too), trigger availableNow; ``columns`` are SQL expressions of what is kept."""
    reader = spark.readStream.format("sluice").option("bootstrap.servers", bootstrap)
    reader = reader.option("subscribe", topic).option("startingOffsets", "earliest")
    for key, value in options.items():
        reader = reader.option(key, value)
    return (
        reader.load()
        .selectExpr(*columns)
        .writeStream.format("parquet")
        .option("path", str(out / "data"))
        .option("checkpointLocation", str(out / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
