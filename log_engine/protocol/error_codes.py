"""Deprecated (issue 16): ``ErrorCode`` lives in :mod:`log_engine.errors`; import from there."""

from log_engine.errors import ErrorCode as ErrorCode  # kept until the issue-17 branches merge
