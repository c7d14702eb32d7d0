"""The base of the tree: :class:`KafkaError`, its registry by code, and the codec's errors.

A class joins the registry by naming its code,
``class X(KafkaError, code=ErrorCode.Y, retriable=True)``; subclasses without a
code refine their parent's (same ``errno``, same ``retriable``).
:func:`error_for_code` turns a wire code into its class.
"""

from __future__ import annotations

from typing import ClassVar

from log_engine.errors.codes import ErrorCode
from log_engine.invariants import check


class ProtocolDecodeError(ValueError):
    """Bytes that do not match the schema being read: truncated, negative lengths,
    impossible array counts, invalid UTF-8, trailing bytes.

    Internal to the codec: the public entry points translate it, so the broker
    sees :class:`InvalidRequestError` and the client :class:`CorruptResponseError`.
    """


class EncodeError(ValueError):
    """A body that does not fit its schema: a wrong type, an out-of-range number,
    None for a field that is not nullable in that version, an over-long string.

    A programmer error in whoever built the body; the message names the field
    (``ProduceResponse.responses.partition_responses.error_code: ...``).
    """


_BY_CODE: dict[int, type[KafkaError]] = {}


class KafkaError(Exception):
    """Base of every Kafka error code and of every operating error the engine raises.

    ``errno`` is the wire code (an :class:`ErrorCode`), ``message`` Kafka's name for
    it, ``retriable`` whether the same request may succeed later without the caller
    changing anything (metadata is stale, a leader moves, a coordinator loads).
    ``str(error)`` reads ``[Error 3] UNKNOWN_TOPIC_OR_PARTITION: <detail>``;
    ``detail`` is the text given when raising it.
    """

    errno: ClassVar[int] = ErrorCode.UNKNOWN_SERVER_ERROR
    retriable: ClassVar[bool] = False
    message: ClassVar[str] = "UNKNOWN_SERVER_ERROR"

    def __init_subclass__(cls, *, code: ErrorCode | None = None, retriable: bool = False) -> None:
        """``class X(KafkaError, code=ErrorCode.Y, retriable=True)`` registers code Y."""
        super().__init_subclass__()
        if code is None:
            return  # an abstract grouping, or a refinement of its parent's code
        check(code not in _BY_CODE, f"error code {code} registered twice")
        cls.errno, cls.message, cls.retriable = code, code.name, retriable
        _BY_CODE[code] = cls

    @property
    def detail(self) -> str:
        """The text given when the error was raised, without the code and name."""
        return super().__str__()

    def __str__(self) -> str:
        detail = self.detail
        text = f"[Error {self.errno}] {self.message}"
        return f"{text}: {detail}" if detail else text


class UnrecognizedKafkaError(KafkaError):
    """Base of the classes :func:`error_for_code` makes for codes it has no class for."""


_UNRECOGNIZED: dict[int, type[KafkaError]] = {}


def error_for_code(code: int) -> type[KafkaError]:
    """The class for a wire error code; unknown codes get a cached generic subclass.

    Raises ``ValueError`` for 0 (``NONE``), which is not an error.
    """
    cls = _BY_CODE.get(code)
    if cls is not None:
        return cls
    if code == 0:
        raise ValueError("error code 0 (NONE) is not an error")
    cls = _UNRECOGNIZED.get(code)
    if cls is None:
        attrs = {"errno": code, "message": f"UNKNOWN_ERROR_CODE_{code}", "retriable": False}
        cls = type(f"UnrecognizedKafkaError{code}", (UnrecognizedKafkaError,), attrs)
        _UNRECOGNIZED[code] = cls
    return cls


def registered_classes() -> dict[int, type[KafkaError]]:
    """Every code's class, by code (a copy: for tests and documentation)."""
    return dict(_BY_CODE)
