"""The pull-based half of the core: Fetch and FetchSnapshot, both sides (KIP-595, KIP-630).

Follower side: one request in flight to the leader, sent again after
``request_timeout_ms``; a response counts only if it comes from the leader of the
current epoch and answers the current position (``fetch_offset`` equal to the log
end), so duplicated or reordered responses are ignored. Entries are appended (persist
action) before the next Fetch announces the new offset.

Leader side: a Fetch is checked against the leader's log (``RaftLog.validate_fetch``);
a valid one updates the follower's progress and may move the high watermark; a Fetch
that finds nothing new is parked until entries arrive, the high watermark moves or
its wait ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from log_engine.errors import ErrorCode
from log_engine.invariants import check
from log_engine.replication.raft.actions import AppendEntries, Output, TruncateLog
from log_engine.replication.raft.leader import LeaderState, ParkedFetch
from log_engine.replication.raft.messages import (
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
)
from log_engine.replication.raft.node_view import NodeView
from log_engine.replication.raft.states import (
    Follower,
    Leading,
    SnapshotDownload,
)
from log_engine.replication.raft.types import Entry, NodeId, OffsetAndEpoch, Snapshot


class Replication(NodeView):
    """Fetch handling mixed into :class:`~log_engine.replication.raft.node.RaftNode`."""

    snapshot: Snapshot | None
    high_watermark: int

    if TYPE_CHECKING:  # provided by RaftNode

        def _stand_for_election(self, out: Output) -> None: ...
        def _leader_update_high_watermark(self, leader: LeaderState, out: Output) -> bool: ...
        def _advance_high_watermark(self, offset: int, out: Output) -> None: ...
        def _install_snapshot(self, snapshot: Snapshot, out: Output) -> None: ...

    # ---- follower side ----------------------------------------------------------

    def _fetch_position(self) -> tuple[int, int]:
        """(fetch offset, last fetched epoch) of this node's log."""
        return self.log.end_offset, self.log.last_epoch

    def _send_fetch(self, state: Follower, out: Output) -> None:
        """Send the follower's next request to its leader (Fetch or FetchSnapshot)."""
        state.in_flight = True
        state.request_deadline_ms = self.now_ms + self.config.request_timeout_ms
        if state.download is not None:
            out.messages.append(
                FetchSnapshotRequest(
                    self.node_id,
                    state.leader_id,
                    state.epoch,
                    state.download.snapshot_id,
                    len(state.download.data),
                    self.config.snapshot_chunk_max_bytes,
                )
            )
            return
        out.messages.append(
            FetchRequest(
                self.node_id,
                state.leader_id,
                state.epoch,
                *self._fetch_position(),
                max_wait_ms=self.config.fetch_max_wait_ms,
            )
        )

    def _tick_follower(self, state: Follower, out: Output) -> None:
        if self.now_ms >= state.fetch_deadline_ms:
            if self.config.is_voter:
                self._stand_for_election(out)  # the leader went quiet
            else:
                self._become_unattached(state.epoch, out)  # an observer looks for the leader
        elif not state.in_flight or self.now_ms >= state.request_deadline_ms:
            self._send_fetch(state, out)

    def _current_follower(self, sender: NodeId, epoch: int) -> Follower | None:
        """The follower state if a response from ``sender`` in ``epoch`` is for it."""
        state = self.state
        if isinstance(state, Follower) and state.leader_id == sender and state.epoch == epoch:
            return state
        return None

    def _on_fetch_response(self, response: FetchResponse, out: Output) -> None:
        if not self._observe_epoch(response.epoch, response.leader_id, out):
            return
        state = self._current_follower(response.sender, response.epoch)
        if state is None or state.download is not None:
            return
        if response.error == ErrorCode.NOT_LEADER_OR_FOLLOWER and response.leader_id is None:
            # the node this one follows says it does not lead (it resigned or restarted)
            self._become_unattached(state.epoch, out, state.voted_for)
            return
        if response.error != ErrorCode.NONE:
            return  # sent again after request_timeout_ms
        if response.fetch_offset != self.log.end_offset:
            return  # a duplicate or an answer to an older position
        state.in_flight = False
        state.leader_refused = False
        state.fetch_deadline_ms = self.now_ms + self.config.fetch_timeout_ms
        if response.diverging_epoch is not None:
            offset = self.log.truncation_offset_for(response.diverging_epoch)
            check(
                offset >= self.high_watermark,
                f"node {self.node_id}: truncation to {offset} below high watermark "
                f"{self.high_watermark}",
            )
            if offset < self.log.end_offset:
                self.log.truncate_from(offset)
                out.persist.append(TruncateLog(offset))
        elif response.snapshot_id is not None:
            state.download = SnapshotDownload(response.snapshot_id)
        else:
            if response.entries:
                for entry in response.entries:
                    self.log.append(entry)
                out.persist.append(AppendEntries(response.entries))
            if response.high_watermark is not None:
                self._advance_high_watermark(response.high_watermark, out)
        self._send_fetch(state, out)

    def _on_fetch_snapshot_response(self, response: FetchSnapshotResponse, out: Output) -> None:
        if not self._observe_epoch(response.epoch, response.leader_id, out):
            return
        state = self._current_follower(response.sender, response.epoch)
        download = state.download if state is not None else None
        if state is None or download is None or response.snapshot_id != download.snapshot_id:
            return
        if response.error == ErrorCode.SNAPSHOT_NOT_FOUND:
            state.download = None  # the leader has a newer one: start again from Fetch
        elif response.error != ErrorCode.NONE or response.position != len(download.data):
            return
        else:
            download.data += response.chunk
            if len(download.data) >= response.size:
                state.download = None
                self._install_snapshot(Snapshot(download.snapshot_id, bytes(download.data)), out)
        state.in_flight = False
        state.leader_refused = False
        state.fetch_deadline_ms = self.now_ms + self.config.fetch_timeout_ms
        self._send_fetch(state, out)

    # ---- leader side --------------------------------------------------------------

    def _fetch_error(self, epoch: int) -> ErrorCode | None:
        """Why this node cannot serve a Fetch of ``epoch`` (None if it can)."""
        if epoch < self.epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if epoch > self.epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        if not isinstance(self.state, Leading):
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return None

    def _on_fetch_request(self, request: FetchRequest, out: Output) -> None:
        if request.epoch > self.epoch:
            self._become_unattached(request.epoch, out)
        error = self._fetch_error(request.epoch)
        state = self.state
        if error is not None or not isinstance(state, Leading):
            out.messages.append(
                FetchResponse(
                    self.node_id,
                    request.sender,
                    error or ErrorCode.NOT_LEADER_OR_FOLLOWER,
                    self.epoch,
                    self.leader_id,
                    request.fetch_offset,
                )
            )
            return
        leader = state.leader
        leader.parked.pop(request.sender, None)
        self._answer_fetch(leader, request, out, may_park=True)

    def _answer_fetch(
        self, leader: LeaderState, request: FetchRequest, out: Output, may_park: bool
    ) -> None:
        validation = self.log.validate_fetch(request.fetch_offset, request.last_fetched_epoch)
        if not validation.valid:
            leader.touch(request.sender, self.now_ms)
            answer = self._leader_fetch_response(
                request, diverging_epoch=validation.diverging, snapshot_id=validation.snapshot_id
            )
            out.messages.append(answer)
            return
        leader.update_replica(request.sender, request.fetch_offset, self.now_ms)
        moved = self._leader_update_high_watermark(leader, out)
        if moved:
            self._complete_parked_fetches(leader, out)
        config = self.config
        entries = tuple(
            self.log.read(request.fetch_offset, config.fetch_max_entries, config.fetch_max_bytes)
        )
        wait_ms = min(request.max_wait_ms, self.config.fetch_max_wait_ms)
        if may_park and not entries and not moved and wait_ms > 0:
            leader.parked[request.sender] = ParkedFetch(request, self.now_ms + wait_ms)
            return
        out.messages.append(self._leader_fetch_response(request, entries=entries))

    def _leader_fetch_response(
        self,
        request: FetchRequest,
        entries: tuple[Entry, ...] = (),
        diverging_epoch: OffsetAndEpoch | None = None,
        snapshot_id: OffsetAndEpoch | None = None,
    ) -> FetchResponse:
        """The leader's answer to ``request``, with its high watermark and log start."""
        return FetchResponse(
            self.node_id,
            request.sender,
            ErrorCode.NONE,
            self.epoch,
            self.node_id,
            request.fetch_offset,
            high_watermark=self.high_watermark,
            log_start_offset=self.log.start_offset,
            entries=entries,
            diverging_epoch=diverging_epoch,
            snapshot_id=snapshot_id,
        )

    def _complete_parked_fetches(self, leader: LeaderState, out: Output) -> None:
        """Answer every parked Fetch now (new entries or a new high watermark)."""
        parked, leader.parked = leader.parked, {}
        for item in parked.values():
            self._answer_fetch(leader, item.request, out, may_park=False)

    def _expire_parked_fetches(self, leader: LeaderState, out: Output) -> None:
        due = [node for node, item in leader.parked.items() if item.deadline_ms <= self.now_ms]
        for node in due:
            item = leader.parked.pop(node)
            self._answer_fetch(leader, item.request, out, may_park=False)

    def _on_fetch_snapshot_request(self, request: FetchSnapshotRequest, out: Output) -> None:
        if request.epoch > self.epoch:
            self._become_unattached(request.epoch, out)
        error = self._fetch_error(request.epoch)
        chunk = b""
        size = 0
        state = self.state
        if error is None and isinstance(state, Leading):
            state.leader.touch(request.sender, self.now_ms)
            if self.snapshot is None or self.snapshot.snapshot_id != request.snapshot_id:
                error = ErrorCode.SNAPSHOT_NOT_FOUND
            elif not 0 <= request.position <= len(self.snapshot.payload):
                error = ErrorCode.POSITION_OUT_OF_RANGE
            else:
                size = len(self.snapshot.payload)
                limit = min(request.max_bytes, self.config.snapshot_chunk_max_bytes)
                chunk = self.snapshot.payload[request.position : request.position + limit]
        out.messages.append(
            FetchSnapshotResponse(
                self.node_id,
                request.sender,
                error or ErrorCode.NONE,
                self.epoch,
                self.leader_id,
                request.snapshot_id,
                request.position,
                size,
                chunk,
            )
        )
