"""Whole PUBLISH (and PUBREL) packets taken straight from the bytes the client read.

paho handles each incoming packet with several calls (a ``recv`` per header
byte, a dict of parsing state, an ``MQTTMessage`` with an ``MQTTMessageInfo``
and its ``threading.Condition``, topic-filter matching for per-filter
callbacks, a callback lock), about 15 us of Python per message. The source
needs none of it: it wants topic, payload, flags and packet id, many messages
at once. :func:`take_publishes` reads consecutive complete PUBLISH packets
from a buffer (MQTT 3.1.1 section 3.3 / MQTT 5 section 3.3):

- fixed header: type 3 in the high nibble, DUP ``0x08``, QoS ``0x06``,
  RETAIN ``0x01``; then the remaining length, 1-4 bytes of 7 bits each,
  least significant first, the high bit meaning "more";
- variable header: topic (2-byte big-endian length, UTF-8), packet id
  (2 bytes, only for QoS > 0), MQTT 5 properties (a length, then properties);
- payload: the rest of the packet.

Given a ``releases`` list it also takes PUBREL packets (section 3.6: ``0x62``,
the packet id, with MQTT 5 an optional reason code and properties, which
change nothing: the answer is a PUBCOMP either way) and appends their packet
ids, so that a stream of QoS 2 traffic, where the broker's PUBRELs come
between its PUBLISHes, is still taken in long runs.

It stops at the first packet it does not take: any other type, a QoS above
``max_qos`` (a client that acknowledges by itself leaves QoS 1 and 2 to
paho), incomplete, or anything odd (an empty MQTT 3 topic, a length that does
not fit, an MQTT 3 PUBREL that is not 2 bytes); paho then reads that packet
the usual way and reports what is wrong with it. Acknowledging is not done
here: the caller decides when (PUBACK or PUBREC) and answers the PUBRELs.
"""

from __future__ import annotations

from typing import NamedTuple

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

PUBLISH = 0x30
PUBREL = 0x62  # type 6 with the reserved flags 0010
MAX_LENGTH_BYTES = 4

_new_tuple = tuple.__new__


class Publish(NamedTuple):
    """One received PUBLISH: what the source turns into a record (topic still in bytes)."""

    topic: bytes
    payload: bytes
    qos: int
    retain: bool
    dup: bool
    mid: int  # 0 at QoS 0
    properties: Properties | None  # MQTT 5 only


def take_publishes(
    data: bytes, start: int, *, v5: bool, max_qos: int = 1, releases: list[int] | None = None
) -> tuple[list[Publish], int]:
    """The complete PUBLISH packets of QoS up to ``max_qos`` (0, 1 or 2) from ``data[start:]``,
    and the position after the last packet taken.

    With ``releases`` given, PUBREL packets are taken too: their packet ids are appended
    to it. Without, a PUBREL stops the run as any other packet type does.
    """
    taken: list[Publish] = []
    end = len(data)
    at = start
    while at + 1 < end:
        command = data[at]
        qos = (command & 0x06) >> 1
        if command & 0xF0 != PUBLISH or qos > max_qos:
            if command != PUBREL or releases is None:
                break
            mid = _release_id(data, at, end, v5)
            if mid < 0:
                break
            releases.append(mid)
            at += 2 + data[at + 1]
            continue
        length = data[at + 1]
        body = at + 2
        if length & 0x80:  # more than one length byte (bodies of 128 bytes and more)
            length, body = _remaining_length(data, at + 1, end)
            if body < 0:
                break
        stop = body + length
        if stop > end:
            break
        publish = _decode(data, command, qos, body, stop, v5)
        if publish is None:
            break
        taken.append(publish)
        at = stop
    return taken, at


def decode_publish(command: int, body: bytes, *, v5: bool) -> Publish | None:
    """The PUBLISH with fixed-header byte ``command`` and ``body`` (what follows the
    remaining length), or None if it is malformed."""
    return _decode(body, command, (command & 0x06) >> 1, 0, len(body), v5)


def release_id(body: bytes, *, v5: bool) -> int | None:
    """The packet id of a PUBREL whose body (after the remaining length) is ``body``,
    or None if it is malformed (MQTT 3: exactly the 2-byte id; MQTT 5: at least)."""
    if len(body) < 2 or (len(body) != 2 and not v5):
        return None
    return body[0] << 8 | body[1]


def _release_id(data: bytes, at: int, end: int, v5: bool) -> int:
    """The packet id of the whole PUBREL at ``data[at]``, -1 if incomplete or odd.

    Its remaining length is one byte: 2 (the id) in MQTT 3; in MQTT 5 up to 127
    (id, reason code, properties) is taken, anything longer is left to paho.
    """
    length = data[at + 1]
    if length & 0x80 or length < 2 or (length != 2 and not v5) or at + 2 + length > end:
        return -1
    return data[at + 2] << 8 | data[at + 3]


def _remaining_length(data: bytes, at: int, end: int) -> tuple[int, int]:
    """(remaining length, where the body starts), or (0, -1) when incomplete or too long."""
    length = 0
    shift = 0
    for position in range(at, min(at + MAX_LENGTH_BYTES, end)):
        byte = data[position]
        length |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return length, position + 1
        shift += 7
    return 0, -1


def _decode(data: bytes, command: int, qos: int, at: int, end: int, v5: bool) -> Publish | None:
    """The PUBLISH whose variable header and payload are ``data[at:end]`` (None if malformed)."""
    if end - at < 2:
        return None
    topic_end = at + 2 + (data[at] << 8 | data[at + 1])
    mid = 0
    position = topic_end
    if qos:
        position += 2
        if position > end:
            return None
        mid = data[topic_end] << 8 | data[topic_end + 1]
    if position > end or (topic_end == at + 2 and not v5):
        return None
    properties = None
    if v5:
        properties = Properties(PacketTypes.PUBLISH)
        try:
            _, size = properties.unpack(data[position:end])
        except Exception:  # paho's own decoding of the packet reports it
            return None
        position += size
        if position > end:
            return None
    return _new_tuple(  # Publish(...) without NamedTuple's Python-level __new__
        Publish,
        (
            data[at + 2 : topic_end],
            data[position:end],
            qos,
            bool(command & 0x01),
            bool(command & 0x08),
            mid,
            properties,
        ),
    )
