"""Kafka-layout storage: segments, indexes, partition logs, recovery, retention, compaction.

Layers, each in its own module: :mod:`segment` (a ``.log`` file and its
:mod:`offset_index` and :mod:`time_index`), :mod:`partition_log` (the segments
of one partition), :mod:`recovery` (loading after a crash), :mod:`retention`,
:mod:`cleaner` (compaction), :mod:`leader_epoch`, :mod:`checkpoints` and
:mod:`log_manager` (one log directory). Public names are re-exported here.
"""

from log_engine.storage.cleaner import CleanResult, clean
from log_engine.storage.config import LogConfig
from log_engine.storage.leader_epoch import LeaderEpochCache
from log_engine.storage.log_manager import LogManager, MaintenanceResult
from log_engine.storage.partition_log import PartitionLog
from log_engine.storage.segment import LogSegment
from log_engine.storage.types import AppendInfo, ReadResult

__all__ = [
    "AppendInfo",
    "CleanResult",
    "LeaderEpochCache",
    "LogConfig",
    "LogManager",
    "LogSegment",
    "MaintenanceResult",
    "PartitionLog",
    "ReadResult",
    "clean",
]
