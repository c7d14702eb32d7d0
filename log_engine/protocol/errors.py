"""Deprecated (issue 16): the error classes live in :mod:`log_engine.errors`; import from there."""

from log_engine.errors import *  # noqa: F403  (kept until the issue-17 branches are merged)
