"""PUBLISH and PUBREL packets taken from received bytes: golden bytes per MQTT 3.1.1 / 5
sections 3.3 and 3.6."""

from __future__ import annotations

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from connectors.mqtt.inbox import Publish, decode_publish, release_id, take_publishes


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


def test_qos_2_packets_are_taken_when_allowed_mqtt3() -> None:
    data = (
        b"\x34\x09\x00\x03a/b\x01\x02hi"  # QoS 2, id 258, "hi"
        + b"\x3d\x06\x00\x01t\xff\xfe!"  # QoS 2 with DUP and RETAIN, id 65534
        + b"\x30\x04\x00\x01t0"  # QoS 0 between them
    )
    taken, at = take_publishes(data, 0, v5=False, max_qos=2)
    assert taken == [
        Publish(b"a/b", b"hi", 2, False, False, 258, None),
        Publish(b"t", b"!", 2, True, True, 65534, None),
        Publish(b"t", b"0", 0, False, False, 0, None),
    ]
    assert at == len(data)
    assert take_publishes(data, 0, v5=False) == ([], 0)  # max_qos 1: left to paho


def test_qos_2_packets_are_taken_when_allowed_mqtt5() -> None:
    user_property = b"\x26\x00\x01k\x00\x01v"  # UserProperty k=v: 7 bytes
    data = b"\x34\x0f\x00\x01t\x00\x2a\x07" + user_property + b"ok"
    data += b"\x34\x06\x00\x00\x00\x2b\x00z"  # empty topic (alias), no properties
    (first, second), at = take_publishes(data, 0, v5=True, max_qos=2)
    assert (first.topic, first.payload, first.qos, first.mid) == (b"t", b"ok", 2, 42)
    assert first.properties is not None and first.properties.UserProperty == [("k", "v")]
    assert (second.topic, second.payload, second.qos, second.mid) == (b"", b"z", 2, 43)
    assert at == len(data)


def test_pubrels_are_taken_with_their_ids_between_publishes() -> None:
    first = publish_packet(b"t", b"1", qos=2, mid=1)
    second = publish_packet(b"t", b"2", qos=2, mid=2)
    pubrel_v3 = b"\x62\x02\x01\x00"  # id 256
    for v5, pubrels in [
        (False, pubrel_v3 + b"\x62\x02\x00\x07"),
        (True, pubrel_v3 + b"\x62\x03\x00\x07\x92"),  # reason 0x92: id not found
        (True, pubrel_v3 + b"\x62\x04\x00\x07\x00\x00"),  # reason 0, no properties
    ]:
        if v5:
            no_properties = Properties(PacketTypes.PUBLISH).pack()
            first = publish_packet(b"t", b"1", qos=2, mid=1, properties=no_properties)
            second = publish_packet(b"t", b"2", qos=2, mid=2, properties=no_properties)
        releases: list[int] = []
        data = first + pubrels + second
        taken, at = take_publishes(data, 0, v5=v5, max_qos=2, releases=releases)
        assert [p.mid for p in taken] == [1, 2]
        assert releases == [256, 7]
        assert at == len(data)


def test_a_run_of_only_pubrels_moves_the_position() -> None:
    releases: list[int] = []
    data = b"\x62\x02\x00\x01\x62\x02\x00\x02"
    assert take_publishes(data, 0, v5=False, max_qos=2, releases=releases) == ([], len(data))
    assert releases == [1, 2]


def test_odd_or_incomplete_pubrels_and_pubrels_not_asked_for_stop_the_run() -> None:
    cases = [
        (False, b"\x62\x03\x00\x05\x00", True),  # MQTT 3: a PUBREL is exactly 2 bytes
        (False, b"\x60\x02\x00\x05", True),  # reserved flags not 0010
        (True, b"\x62\x01\x00", True),  # shorter than a packet id
        (False, b"\x62\x02\x00\x05", False),  # no releases list: left to paho
        (False, b"\x36\x04\x00\x01t\x00", True),  # QoS 3 does not exist
    ]
    for v5, stopper, with_list in cases:
        properties = Properties(PacketTypes.PUBLISH).pack() if v5 else None
        first = publish_packet(b"t", b"1", qos=2, mid=1, properties=properties)
        releases: list[int] | None = [] if with_list else None
        taken, at = take_publishes(
            first + stopper + first, 0, v5=v5, max_qos=2, releases=releases
        )
        assert len(taken) == 1 and at == len(first), stopper
        assert not releases
    releases = []
    first = publish_packet(b"t", b"1", qos=2, mid=1)
    for cut in (b"\x62", b"\x62\x02\x00"):  # incomplete at the end of what was read
        taken, at = take_publishes(first + cut, 0, v5=False, max_qos=2, releases=releases)
        assert len(taken) == 1 and at == len(first) and not releases


def test_a_single_packet_read_by_paho_is_decoded_the_same_way() -> None:
    assert decode_publish(0x3C, b"\x00\x01t\x00\x09body", v5=False) == Publish(
        b"t", b"body", 2, False, True, 9, None
    )
    assert decode_publish(0x34, b"\x00\x00\x00\x09", v5=False) is None  # MQTT 3: no topic
    assert release_id(b"\x12\x34", v5=False) == 0x1234
    assert release_id(b"\x12\x34\x00", v5=False) is None
    assert release_id(b"\x12\x34\x92", v5=True) == 0x1234
    assert release_id(b"\x12", v5=True) is None
