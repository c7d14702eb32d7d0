"""Fetch Tansu (the non-Sluice Kafka-compatible broker the tests run against) once.

Used by ``make test``; the tests' fixture does the same when the binary is
missing. Prints where the binary is.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.tansu import TansuUnavailable, tansu_binary

try:
    print(f"tansu: {tansu_binary()}")
except TansuUnavailable as exc:
    sys.exit(str(exc))
