"""The batch compression codecs: none, gzip, snappy, lz4, zstd.

Stream formats match what the Java client writes, so batches interoperate:

- gzip: a plain gzip stream (zlib with a gzip header);
- snappy: xerial snappy-java framing — an 8-byte magic ``\\x82SNAPPY\\x00``, two
  int32 versions, then blocks of ``int32 length`` + raw snappy. Reading also
  accepts a bare raw snappy block, as librdkafka does;
- lz4: the LZ4 *frame* format;
- zstd: a plain zstd frame.

snappy, lz4 and zstd come from ``cramjam`` (one Rust-backed wheel); gzip from zlib.
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum

import cramjam

from log_engine.errors import CorruptRecordError, UnsupportedCompressionError

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK_BYTES = 32 * 1024  # snappy-java's default block size
_GZIP_WBITS = 31  # zlib: gzip container
_AUTO_WBITS = 47  # zlib: detect gzip or zlib header


class Compression(IntEnum):
    """Codec ids as stored in bits 0-2 of a batch's attributes."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @classmethod
    def from_name(cls, name: str) -> Compression:
        """Parse Kafka's ``compression.type`` names (``none``, ``gzip``, ...)."""
        try:
            return cls[name.strip().upper()]
        except KeyError:
            raise UnsupportedCompressionError(f"unknown compression type {name!r}") from None


def compress(codec: Compression, data: bytes) -> bytes:
    """Compress ``data`` in the stream format Kafka uses for ``codec``."""
    if codec == Compression.NONE:
        return data
    if codec == Compression.GZIP:
        compressor = zlib.compressobj(6, zlib.DEFLATED, _GZIP_WBITS)
        return compressor.compress(data) + compressor.flush()
    if codec == Compression.SNAPPY:
        return _xerial_compress(data)
    if codec == Compression.LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == Compression.ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise UnsupportedCompressionError(f"unknown compression codec id {int(codec)}")


def decompress(codec: int, data: bytes | memoryview) -> bytes:
    """Decompress a batch's record stream; raise CorruptRecordError on bad input."""
    try:
        if codec == Compression.NONE:
            return bytes(data)
        if codec == Compression.GZIP:
            return zlib.decompress(data, _AUTO_WBITS)
        if codec == Compression.SNAPPY:
            return _xerial_decompress(bytes(data))
        if codec == Compression.LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == Compression.ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except (zlib.error, cramjam.DecompressionError, ValueError) as exc:
        raise CorruptRecordError(f"cannot decompress {_name(codec)} records: {exc}") from exc
    raise UnsupportedCompressionError(f"unknown compression codec id {codec}")


def _name(codec: int) -> str:
    try:
        return Compression(codec).name.lower()
    except ValueError:
        return f"codec {codec}"


def _xerial_compress(data: bytes) -> bytes:
    out = bytearray(_XERIAL_HEADER)
    view = memoryview(data)
    for start in range(0, len(data), _XERIAL_BLOCK_BYTES):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_BYTES]))
        out += struct.pack(">i", len(block))
        out += block
    return bytes(out)


def _xerial_decompress(data: bytes) -> bytes:
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    out = bytearray()
    pos = len(_XERIAL_HEADER)
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptRecordError("truncated xerial snappy block length")
        (length,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise CorruptRecordError("truncated xerial snappy block")
        out += cramjam.snappy.decompress_raw(data[pos : pos + length])
        pos += length
    return bytes(out)
