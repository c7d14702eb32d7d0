"""The config keys S3 sink and source share (Confluent's names), declared once.

``format.class`` accepts a short name (``json``, ``bytearray``, ``parquet``)
or Confluent's class names (``io.confluent.connect.s3.format.json.JsonFormat``,
``...bytearray.ByteArrayFormat``, ``...parquet.ParquetFormat``); the model
keeps the short name. Parquet needs the optional ``parquet`` extra (pyarrow):
choosing it without pyarrow installed is a config error naming the key.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import Field, SecretStr, field_validator

from connectors.api import PluginConfig

FORMAT_ALIASES: dict[str, str] = {
    "json": "json",
    "jsonformat": "json",
    "io.confluent.connect.s3.format.json.jsonformat": "json",
    "bytearray": "bytearray",
    "bytes": "bytearray",
    "bytearrayformat": "bytearray",
    "io.confluent.connect.s3.format.bytearray.bytearrayformat": "bytearray",
    "parquet": "parquet",
    "parquetformat": "parquet",
    "io.confluent.connect.s3.format.parquet.parquetformat": "parquet",
}


def canonical_format(name: str) -> str:
    """The short format name for any accepted spelling; ValueError for an unknown one."""
    short = FORMAT_ALIASES.get(name.strip().lower())
    if short is None:
        known = "json, bytearray, parquet (or Confluent's JsonFormat, ByteArrayFormat, ...)"
        raise ValueError(f"unknown format {name!r}; use one of: {known}")
    if short == "parquet":
        try:
            importlib.import_module("pyarrow.parquet")
        except ImportError:
            raise ValueError(
                "ParquetFormat needs pyarrow, which is not installed: "
                "pip install 'sluice[parquet]' (or pip install pyarrow)"
            ) from None
    return short


class S3ConnectionConfig(PluginConfig):
    """Where the objects are (bucket, region, endpoint, credentials, topics.dir), their format."""

    s3_bucket_name: str = Field(
        alias="s3.bucket.name",
        min_length=3,
        max_length=63,
        description="The S3 bucket the objects are written to / read from.",
        json_schema_extra={"importance": "HIGH", "width": "LONG"},
    )
    s3_region: str = Field(
        "us-east-1",
        alias="s3.region",
        min_length=1,
        description="The AWS region of the bucket.",
        json_schema_extra={"importance": "MEDIUM", "width": "SHORT"},
    )
    store_url: str | None = Field(
        None,
        alias="store.url",
        description=(
            "A custom S3 endpoint (MinIO, moto, ...), e.g. http://127.0.0.1:9000; "
            "empty for AWS S3. Uses path-style addressing."
        ),
        json_schema_extra={"importance": "HIGH", "width": "LONG"},
    )
    aws_access_key_id: SecretStr | None = Field(
        None,
        alias="aws.access.key.id",
        description="Access key id; empty: boto3's credential chain (env, profile, role).",
        json_schema_extra={"importance": "HIGH", "width": "MEDIUM"},
    )
    aws_secret_access_key: SecretStr | None = Field(
        None,
        alias="aws.secret.access.key",
        description="Secret access key, with aws.access.key.id.",
        json_schema_extra={"importance": "HIGH", "width": "MEDIUM"},
    )
    topics_dir: str = Field(
        "topics",
        alias="topics.dir",
        description="Top-level prefix of the objects: <topics.dir>/<topic>/<partition path>/.",
        json_schema_extra={"importance": "HIGH", "width": "MEDIUM"},
    )
    format_class: str = Field(
        "json",
        alias="format.class",
        description=(
            "Object format: json (JSON lines), bytearray (raw bytes, one record per line) or "
            "parquet (needs pyarrow); Confluent's format class names are accepted too."
        ),
        json_schema_extra={"importance": "HIGH", "width": "LONG"},
    )

    @field_validator("store_url", mode="before")
    @classmethod
    def _empty_url_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("topics_dir")
    @classmethod
    def _strip_slashes(cls, value: str) -> str:
        stripped = value.strip("/")
        if not stripped:
            raise ValueError("must not be empty")
        return stripped

    @field_validator("format_class")
    @classmethod
    def _known_format(cls, value: str) -> str:
        return canonical_format(value)
