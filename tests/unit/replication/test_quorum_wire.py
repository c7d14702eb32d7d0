"""The Raft core's messages through Kafka's bytes and back, one for one.

Each request is translated to its KRaft body, encoded as a request frame, decoded as
the controller listener does, and translated back; each response likewise through a
response frame. Entries travel as record batches (control entries as control batches).
"""

from __future__ import annotations

import pytest

from log_engine.protocol import decode_request, decode_response, encode_request
from log_engine.protocol.codec import encode_response
from log_engine.protocol.headers import RequestHeader
from log_engine.records.batch import decode_batch, iter_batches
from log_engine.replication.quorum.records import decode_entries, encode_entries
from log_engine.replication.quorum.translate import (
    INCONSISTENT_CLUSTER_ID,
    INVALID_VOTER_KEY,
    WireError,
    error_response,
    request_from_wire,
    request_to_wire,
    response_from_wire,
    response_to_wire,
)
from log_engine.replication.raft import Entry, ErrorCode, OffsetAndEpoch
from log_engine.replication.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    RaftRequest,
    RaftResponse,
    VoteRequest,
    VoteResponse,
)

CLUSTER = "6DY0t_C14ogAGP-URUSHzA"
ENTRIES = (
    Entry(10, 3, b"leader-change", control=True),
    Entry(11, 3, b"a"),
    Entry(12, 3, b"bb"),
    Entry(13, 4, b"leader-change", control=True),
    Entry(14, 4, b"ccc"),
)

CASES: list[tuple[RaftRequest, RaftResponse]] = [
    (
        VoteRequest(2, 1, 5, OffsetAndEpoch(40, 4), pre_vote=True),
        VoteResponse(1, 2, ErrorCode.NONE, 4, 3, vote_granted=True, pre_vote=True),
    ),
    (
        VoteRequest(2, 1, 5, OffsetAndEpoch(40, 4)),
        VoteResponse(1, 2, ErrorCode.FENCED_LEADER_EPOCH, 6, None, vote_granted=False),
    ),
    (BeginQuorumEpochRequest(1, 3, 7), BeginQuorumEpochResponse(3, 1, ErrorCode.NONE, 7, 1)),
    (
        EndQuorumEpochRequest(1, 2, 7, (3, 2)),
        EndQuorumEpochResponse(2, 1, ErrorCode.NONE, 7, None),
    ),
    (
        FetchRequest(3, 1, 4, 10, 3, max_wait_ms=500),
        FetchResponse(1, 3, ErrorCode.NONE, 4, 1, 10, high_watermark=12, entries=ENTRIES),
    ),
    (
        FetchRequest(3, 1, 4, 50, 3),
        FetchResponse(1, 3, ErrorCode.NONE, 4, 1, 50, 12, 0, diverging_epoch=OffsetAndEpoch(13, 3)),
    ),
    (
        FetchRequest(4, 1, 4, 0, 0),
        FetchResponse(1, 4, ErrorCode.NONE, 4, 1, 0, 30, 20, snapshot_id=OffsetAndEpoch(20, 3)),
    ),
    (
        FetchRequest(3, 2, 4, 10, 3),
        FetchResponse(2, 3, ErrorCode.NOT_LEADER_OR_FOLLOWER, 5, None, 10, None),
    ),
    (
        FetchSnapshotRequest(4, 1, 4, OffsetAndEpoch(20, 3), 1024, 4096),
        FetchSnapshotResponse(
            1, 4, ErrorCode.NONE, 4, 1, OffsetAndEpoch(20, 3), 1024, 5000, b"\x00chunk\xff"
        ),
    ),
]


def _through_bytes(request: RaftRequest, receiver: int) -> tuple[int, RaftRequest]:
    key, version, body = request_to_wire(request, CLUSTER, 1 << 20)
    frame = encode_request(key, version, 9, "sluice-raft", body)
    header, decoded = decode_request(frame[4:], controller=True)
    assert (header.api_key, header.api_version) == (key, version)
    return key, request_from_wire(header.api_key, decoded, receiver, CLUSTER)


@pytest.mark.parametrize(("request_", "response"), CASES, ids=lambda m: type(m).__name__)
def test_request_and_response_round_trip(request_: RaftRequest, response: RaftResponse) -> None:
    key, back = _through_bytes(request_, request_.receiver)
    assert back == request_
    version = request_to_wire(request_, CLUSTER, 1 << 20)[1]
    chunks = encode_response(RequestHeader(key, version, 9, None), response_to_wire(response))
    frame = b"".join(bytes(c) for c in chunks)  # type: ignore[arg-type]
    _, body = decode_response(key, version, frame[4:])
    assert response_from_wire(request_, body) == response


def test_another_cluster_is_refused_before_the_core() -> None:
    key, _, body = request_to_wire(BeginQuorumEpochRequest(1, 2, 3), "other", 1 << 20)
    with pytest.raises(WireError) as caught:
        request_from_wire(key, body, 2, CLUSTER)
    assert caught.value.error_code == INCONSISTENT_CLUSTER_ID
    with pytest.raises(WireError):
        response_from_wire(BeginQuorumEpochRequest(1, 2, 3), error_response(key, 104))


def test_a_request_for_another_voter_is_refused() -> None:
    """Voter lists that map an id to another node's address (possible with an explicit
    cluster.id): a Vote meant for node 2 must not be counted as node 3's answer."""
    key, _, body = request_to_wire(VoteRequest(1, 2, 5, OffsetAndEpoch(0, 0)), CLUSTER, 1 << 20)
    with pytest.raises(WireError) as caught:
        request_from_wire(key, body, 3, CLUSTER)
    assert caught.value.error_code == INVALID_VOTER_KEY
    key, _, body = request_to_wire(BeginQuorumEpochRequest(1, 2, 5), CLUSTER, 1 << 20)
    with pytest.raises(WireError):
        request_from_wire(key, body, 3, CLUSTER)


def test_entries_travel_as_one_record_per_entry_in_batches_per_epoch() -> None:
    data = encode_entries(ENTRIES)
    batches = [decode_batch(data, pos) for pos, _ in iter_batches(data)]
    assert [(h.base_offset, h.partition_leader_epoch, h.is_control) for h, _ in batches] == [
        (10, 3, True),
        (11, 3, False),
        (13, 4, True),
        (14, 4, False),
    ]
    assert [len(records) for _, records in batches] == [1, 2, 1, 1]
    assert batches[0][1][0].key == b"\x00\x00\x00\x02"  # control record: LeaderChange
    assert decode_entries(data) == ENTRIES
    assert decode_entries(None) == ()
