"""PUBLISH packets taken from received bytes: golden bytes per MQTT 3.1.1 / 5 section 3.3."""

from __future__ import annotations

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from connectors.mqtt.inbox import Publish, take_publishes


def remaining_length(length: int) -> bytes:
    out = bytearray()
    while True:
        byte, length = length % 128, length // 128
        out.append(byte | (0x80 if length else 0))
        if not length:
            return bytes(out)


def publish_packet(
    topic: bytes,
    payload: bytes,
    *,
    qos: int = 0,
    mid: int = 0,
    retain: bool = False,
    dup: bool = False,
    properties: bytes | None = None,
) -> bytes:
    body = len(topic).to_bytes(2, "big") + topic
    if qos:
        body += mid.to_bytes(2, "big")
    if properties is not None:
        body += properties
    body += payload
    command = 0x30 | qos << 1 | (0x08 if dup else 0) | (0x01 if retain else 0)
    return bytes([command]) + remaining_length(len(body)) + body


def test_consecutive_packets_are_taken_with_their_flags_and_ids() -> None:
    data = (
        publish_packet(b"a/b", b"one")
        + publish_packet(b"a/c", b"two", qos=1, mid=513, retain=True, dup=True)
        + publish_packet(b"a/d", b"")
    )
    taken, at = take_publishes(data, 0, v5=False)
    assert taken == [
        Publish(b"a/b", b"one", 0, False, False, 0, None),
        Publish(b"a/c", b"two", 1, True, True, 513, None),
        Publish(b"a/d", b"", 0, False, False, 0, None),
    ]
    assert at == len(data)


def test_a_multi_byte_remaining_length_and_a_start_offset() -> None:
    big = bytes(range(256)) * 70  # 17920 bytes: a 3-byte remaining length
    data = b"junk" + publish_packet(b"t", big, qos=1, mid=7)
    [publish], at = take_publishes(data, 4, v5=False)
    assert (publish.topic, publish.payload, publish.mid) == (b"t", big, 7)
    assert at == len(data)


def test_it_stops_before_an_incomplete_packet() -> None:
    whole = publish_packet(b"t", b"whole")
    cut = publish_packet(b"t", b"x" * 300)
    for end in (1, 2, 5, len(cut) - 1):  # inside the length, the topic, the payload
        taken, at = take_publishes(whole + cut[:end], 0, v5=False)
        assert [p.payload for p in taken] == [b"whole"]
        assert at == len(whole)


def test_it_leaves_other_packets_qos_2_and_odd_ones_to_paho() -> None:
    first = publish_packet(b"t", b"1")
    stoppers = [
        bytes([0x40, 0x02, 0x00, 0x01]),  # PUBACK
        publish_packet(b"t", b"2", qos=2, mid=1),
        publish_packet(b"", b"empty topic"),  # MQTT 3: malformed
        bytes([0x30, 0x01, 0x00]),  # shorter than a topic length
        bytes([0x32, 0x03, 0x00, 0x01, ord("t")]),  # QoS 1 without room for its id
        bytes([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),  # a 5-byte remaining length
    ]
    for stopper in stoppers:
        taken, at = take_publishes(first + stopper + first, 0, v5=False)
        assert len(taken) == 1 and at == len(first), stopper


def test_qos_1_is_left_to_paho_when_it_acknowledges_by_itself() -> None:
    first = publish_packet(b"t", b"0")
    taken, at = take_publishes(
        first + publish_packet(b"t", b"1", qos=1, mid=2), 0, v5=False, max_qos=0
    )
    assert [p.payload for p in taken] == [b"0"]
    assert at == len(first)


def test_mqtt5_properties_are_decoded_and_an_empty_topic_is_allowed() -> None:
    properties = Properties(PacketTypes.PUBLISH)
    properties.UserProperty = [("site", "berlin"), ("unit", "kW")]
    properties.TopicAlias = 3
    data = publish_packet(b"", b"payload", qos=1, mid=9, properties=properties.pack())
    data += publish_packet(b"x", b"plain", properties=Properties(PacketTypes.PUBLISH).pack())
    (first, second), at = take_publishes(data, 0, v5=True)
    assert (first.topic, first.payload, first.mid) == (b"", b"payload", 9)
    assert first.properties is not None
    assert first.properties.UserProperty == [("site", "berlin"), ("unit", "kW")]
    assert (second.topic, second.payload) == (b"x", b"plain")
    assert at == len(data)
