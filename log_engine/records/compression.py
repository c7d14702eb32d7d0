"""The batch compression codecs: none, gzip, snappy, lz4, zstd.

Stream formats match what the Java client writes, so batches interoperate:

- gzip: a plain gzip stream (zlib with a gzip header);
- snappy: xerial snappy-java framing — an 8-byte magic ``\\x82SNAPPY\\x00``, two
  int32 versions, then blocks of ``int32 length`` + raw snappy. Reading also
  accepts a bare raw snappy block, as librdkafka does;
- lz4: the LZ4 *frame* format;
- zstd: a plain zstd frame.

snappy, lz4 and zstd come from ``cramjam`` (one Rust-backed wheel); gzip from zlib.

:class:`BoundedDecompressor` is the broker's reader (it checks produced records):
it refuses a stream that inflates past a bound instead of allocating it (a
1 MB zstd batch can describe gigabytes of zeros), and decompresses lz4 and
zstd into one reused scratch buffer, which saves the page faults of a fresh
allocation per batch (two to four times the decompression itself).
"""

from __future__ import annotations

import mmap
import struct
import zlib
from enum import IntEnum

import cramjam

from log_engine.errors import (
    CorruptMessageError,
    MessageTooLargeError,
    UnsupportedCompressionTypeError,
)

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
            raise UnsupportedCompressionTypeError(f"unknown compression type {name!r}") from None


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
    raise UnsupportedCompressionTypeError(f"unknown compression codec id {int(codec)}")


def decompress(codec: int, data: bytes | memoryview) -> bytes:
    """Decompress a batch's record stream; raise CorruptMessageError on bad input."""
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
        raise CorruptMessageError(f"cannot decompress {_name(codec)} records: {exc}") from exc
    raise UnsupportedCompressionTypeError(f"unknown compression codec id {codec}")


_SCRATCH_BYTES = 8 * 1024 * 1024
_OUTPUT_FULL = "failed to write whole buffer"  # cramjam's words for "output buffer too small"


class BoundedDecompressor:
    """Decompresses record streams of at most ``max_bytes`` (one at a time: not thread-safe).

    :meth:`decompress` returns a view that stays valid until the next call.
    Raises CorruptMessageError for a broken stream and MessageTooLargeError for
    one that inflates past ``max_bytes``.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._scratch: bytearray | None = None  # allocated at the first lz4/zstd batch

    def decompress(self, codec: int, data: bytes | memoryview) -> memoryview:
        try:
            if codec == Compression.GZIP:
                return memoryview(self._gzip(data))
            if codec == Compression.SNAPPY:
                self._check_snappy_lengths(bytes(data))
                return memoryview(decompress(codec, data))
            if codec == Compression.LZ4:
                return self._into("lz4", data)
            if codec == Compression.ZSTD:
                return self._into("zstd", data)
        except (zlib.error, cramjam.DecompressionError, ValueError) as exc:
            raise CorruptMessageError(f"cannot decompress {_name(codec)} records: {exc}") from exc
        return memoryview(decompress(codec, data))

    def _too_large(self, codec: str) -> MessageTooLargeError:
        return MessageTooLargeError(
            f"{codec} records decompress to more than {self.max_bytes} bytes"
        )

    def _gzip(self, data: bytes | memoryview) -> bytes:
        inflater = zlib.decompressobj(_AUTO_WBITS)
        out = inflater.decompress(data, self.max_bytes + 1)
        if len(out) > self.max_bytes:
            raise self._too_large("gzip")
        if not inflater.eof:
            raise CorruptMessageError("cannot decompress gzip records: truncated stream")
        return out

    def _check_snappy_lengths(self, data: bytes) -> None:
        if not data.startswith(_XERIAL_MAGIC):
            blocks = [data]
        else:
            blocks = []
            pos = len(_XERIAL_HEADER)
            while pos + 4 <= len(data):
                (length,) = struct.unpack_from(">i", data, pos)
                blocks.append(data[pos + 4 : pos + 4 + max(length, 0)])
                pos += 4 + max(length, 0)
        total = sum(cramjam.snappy.decompress_raw_len(block) for block in blocks)
        if total > self.max_bytes:
            raise self._too_large("snappy")

    def _into(self, codec: str, data: bytes | memoryview) -> memoryview:
        """lz4 or zstd into the scratch buffer, or a lazily mapped one of max_bytes."""
        into = cramjam.lz4.decompress_into if codec == "lz4" else cramjam.zstd.decompress_into
        if self._scratch is None:
            self._scratch = bytearray(min(_SCRATCH_BYTES, self.max_bytes))
        try:
            return memoryview(self._scratch)[: into(data, self._scratch)]
        except cramjam.DecompressionError as exc:
            if _OUTPUT_FULL not in str(exc):
                raise
            if len(self._scratch) >= self.max_bytes:
                raise self._too_large(codec) from None
        # Larger than the scratch buffer: pages of an anonymous map are only
        # allocated when written, so a bomb costs at most max_bytes, briefly.
        with mmap.mmap(-1, self.max_bytes) as big:
            try:
                written = into(data, big)
            except cramjam.DecompressionError as exc:
                if _OUTPUT_FULL in str(exc):
                    raise self._too_large(codec) from None
                raise
            return memoryview(big[:written])


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
            raise CorruptMessageError("truncated xerial snappy block length")
        (length,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise CorruptMessageError("truncated xerial snappy block")
        out += cramjam.snappy.decompress_raw(data[pos : pos + length])
        pos += length
    return bytes(out)
