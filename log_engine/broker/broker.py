"""A broker: storage, topics, groups, the network server and (in a cluster) the
controller quorum in one object.

``Broker(config)`` wires the pieces together; ``await broker.start()`` opens the
log directory (taking its lock), loads committed offsets (a single node; in a
cluster each leader of a ``__consumer_offsets`` partition loads its own, see
``group_ownership.py``), binds every client listener and
starts the maintenance loop (flush.ms, retention, compaction, checkpoints).
With ``controller.quorum.voters`` set it first checks (or, on the first start,
writes) ``meta.properties``, then runs the Raft quorum (:attr:`quorum`: a voter
when ``process.roles`` has ``controller``, which also binds the controller
listener; an observer otherwise). A controller-only node runs just the quorum.
``await broker.stop()`` closes connections and shuts the logs down cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from log_engine.broker.cluster.acls import ClusterAclStore
from log_engine.broker.cluster.node import ClusterNode
from log_engine.broker.cluster_config import ClusterConfig
from log_engine.broker.config import BrokerConfig, BrokerConfigError, Listener
from log_engine.broker.group_coordinator import GroupCoordinator
from log_engine.broker.group_ownership import GroupOwnership
from log_engine.broker.metrics import BrokerMetrics
from log_engine.broker.metrics.endpoint import MetricsEndpoint
from log_engine.broker.offset_store import OffsetStore
from log_engine.broker.producer_ids import ProducerIdManager
from log_engine.broker.replica.manager import ReplicaManager
from log_engine.broker.security.acl_store import AclStore, AclStoreError, FileAclStore
from log_engine.broker.security.authorizer import Authorizer
from log_engine.broker.security.inter_broker import client_settings
from log_engine.broker.security.listener_security import SecurityConfigError
from log_engine.broker.server import BrokerServer
from log_engine.broker.topics import TopicManager
from log_engine.metadata.listener import MetadataListener
from log_engine.records import record_check
from log_engine.replication.quorum import ControllerQuorum, ensure_formatted
from log_engine.replication.raft import RaftListener
from log_engine.storage.config import LogConfig
from log_engine.storage.log_manager import LogManager

log = logging.getLogger(__name__)

CLUSTER_ID = "sluice-cluster-000000"


class LogDirFailedError(RuntimeError):
    """A clustered broker's log directory failed: the process stops (exit non-zero)."""


class Broker:
    """One broker process's state and services."""

    def __init__(self, config: BrokerConfig, quorum_listener: RaftListener | None = None) -> None:
        self.config = config
        self.node_id = config.node_id
        self.cluster: ClusterConfig | None = config.cluster
        self.cluster_id = self.cluster.cluster_id if self.cluster else CLUSTER_ID
        metadata: MetadataListener | None = None
        if self.cluster is not None and quorum_listener is None:
            metadata = MetadataListener()
            quorum_listener = metadata
        self.quorum: ControllerQuorum | None = (
            ControllerQuorum(self.cluster, config.log_dir, quorum_listener)
            if self.cluster
            else None
        )
        self.controller_server: BrokerServer | None = (
            BrokerServer(self, controller=True)
            if self.cluster and self.cluster.is_controller
            else None
        )
        self.logs: LogManager
        #: Set (with LogDirFailedError) when a clustered broker's log dir fails.
        self.log_dir_failure: asyncio.Future[None] | None = None
        self.topics: TopicManager
        self.offsets: OffsetStore
        self.ownership: GroupOwnership
        """Which groups this broker coordinates (every one on a single node)."""
        self.groups = GroupCoordinator(
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
            min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
        )
        self.producer_ids: ProducerIdManager
        self.authorizer: Authorizer | None = None
        """ACL decisions (``authorizer.class.name`` set), else None: no authorization."""
        self.server = BrokerServer(self)
        """The inter-broker listener's server (followers fetch through it)."""
        self.servers: dict[str, BrokerServer] = {}
        """Every client listener's server by listener name (``self.server`` among them)."""
        self.replicas = ReplicaManager(self)
        self.cluster_node: ClusterNode | None = (
            ClusterNode(self, metadata) if metadata is not None else None
        )
        """The cluster wiring (metadata image, controller, registration); None for a
        single node, or when a test passes its own ``quorum_listener``."""
        self._maintenance: asyncio.Task[None] | None = None
        self._maintenance_run: asyncio.Future[None] | None = None
        self.metrics: BrokerMetrics | None = (
            BrokerMetrics() if config.metrics_address is not None else None
        )
        """The running counters behind ``GET /metrics``; None when metrics.listeners is unset."""
        self.metrics_endpoint: MetricsEndpoint | None = None

    @property
    def advertised(self) -> Listener:
        """The inter-broker listener's advertised host and port."""
        return self.advertised_on(self.config.listener.name)

    def advertised_on(self, listener_name: str) -> Listener:
        """Host and port clients of listener ``listener_name`` are told to use (the
        bound port when 0 was asked); the inter-broker listener's for an unknown name."""
        bound = next(
            (b for b in self.config.broker_listeners if b.name == listener_name),
            self.config.listener,
        )
        listener = self.config.advertised_for(bound)
        server = self.servers.get(bound.name)
        if listener.port == 0 and server is not None and server.port:
            return Listener(listener.name, listener.host, server.port, listener.protocol)
        return listener

    def advertised_endpoints(self) -> list[Listener]:
        """Every client listener's advertised address (what registration publishes)."""
        return [self.advertised_on(b.name) for b in self.config.broker_listeners]

    @property
    def serves_clients(self) -> bool:
        """False on a controller-only node (no client listener, no partition logs)."""
        return self.cluster is None or self.cluster.is_broker

    async def start(self) -> None:
        started = time.monotonic()
        self.config.log_dir.mkdir(parents=True, exist_ok=True)
        if self.cluster is not None:
            ensure_formatted(self.config.log_dir, self.cluster.cluster_id, self.node_id)
        self._start_metrics()  # first: a busy metrics port fails before anything else runs
        try:
            await self._start_quorum()
            if self.cluster_node is not None:
                self.cluster_node.start_controller()
            if self.serves_clients:
                await self._start_broker()
                if self.cluster_node is not None:
                    self.cluster_node.start_broker()
        except BaseException:
            if self.metrics_endpoint is not None:
                self.metrics_endpoint.stop()
                self.metrics_endpoint = None
            raise
        log.info("node %d started in %.2fs", self.node_id, time.monotonic() - started)

    def _start_metrics(self) -> None:
        address = self.config.metrics_address
        if self.metrics is None or address is None:
            return
        self.metrics_endpoint = MetricsEndpoint(self, self.metrics, *address)
        self.metrics_endpoint.start()

    async def _start_quorum(self) -> None:
        if self.quorum is None:
            return
        await self.quorum.start()
        if self.controller_server is not None:
            # before the controller listener serves: it checks ACLs too (a
            # controller-only node has no broker start that would set it)
            self.authorizer = self._authorizer()
            assert self.cluster is not None and self.cluster.controller_listener is not None
            listener = self.cluster.controller_listener
            try:
                await self.controller_server.start(listener)
            except OSError as exc:
                await self.quorum.stop()
                raise BrokerConfigError(
                    f"cannot bind the controller listener {listener}: {exc.strerror or exc} "
                    f"(is node {self.node_id} already running?)"
                ) from None
            log.info(
                "controller %d listening on %s (cluster %s)",
                self.node_id,
                self.controller_server.address,
                self.cluster_id,
            )

    async def _start_broker(self) -> None:
        started = time.monotonic()
        defaults = LogConfig.from_properties(self.config.default_topic_properties())
        self.logs = LogManager.open(self.config.log_dir, defaults)
        self.topics = TopicManager(self.logs)
        if self.cluster_node is None:
            self.offsets = OffsetStore.local(
                self.topics,
                self.config.offsets_topic_num_partitions,
                self.config.offsets_topic_segment_bytes,
            )
        else:
            self.offsets = OffsetStore.replicated_store(
                self.topics,
                self.cluster_node.offsets_partition_count,
                self.config.offsets_commit_timeout_ms,
            )
        self.ownership = GroupOwnership(self.offsets, self.groups)
        self.replicas.role_listeners.append(self.ownership.partition_changed)
        self.producer_ids = ProducerIdManager(self.config.log_dir)
        if self.authorizer is None:
            self.authorizer = self._authorizer()
        if self.cluster_node is not None:
            self.replicas.fetcher_security = self._inter_broker_security()
            self._stop_on_log_dir_failure()
        self.groups.start()
        # a clustered broker accepts clients once the controller unfenced it
        await self._start_servers()
        self._maintenance = asyncio.get_running_loop().create_task(self._maintain())
        log.info(
            "broker %d listening on %s (advertised %s), %d topics, started in %.2fs",
            self.node_id,
            ", ".join(f"{name} {s.address}" for name, s in self.servers.items()),
            ", ".join(str(a) for a in self.advertised_endpoints()),
            len(self.topics.topics()),
            time.monotonic() - started,
        )
        if not record_check.NATIVE:
            log.warning(
                "the C record check is not built (pip install -e . builds it): produce uses "
                "the pure-Python fallback, ~2-3 us of CPU per record instead of ~0.01"
            )

    def _inter_broker_security(self) -> dict[str, str]:
        """The client keys followers connect to leaders with (the inter-broker listener's
        protocol and this broker's own credentials); a bad key stops the start."""
        listener = self.config.listener
        try:
            return client_settings(
                listener.name, listener.protocol, self.config.security_settings
            )
        except SecurityConfigError as exc:
            raise BrokerConfigError(f"inter-broker listener {listener.name}: {exc}") from None

    async def _start_servers(self) -> None:
        """Bind every client listener, each with its own security protocol; a clustered
        broker accepts clients once the controller unfenced it."""
        inter_broker = self.config.listener.name
        for listener in self.config.broker_listeners:  # every listener's keys first
            server = self.server if listener.name == inter_broker else BrokerServer(self)
            server.configure(listener)
            self.servers[listener.name] = server
        for listener in self.config.broker_listeners:
            server = self.servers[listener.name]
            try:
                await server.start(listener, accepting=self.cluster_node is None)
            except BaseException:
                for started in self.servers.values():
                    await started.stop()
                raise

    def open_servers(self) -> None:
        """Start accepting clients on every client listener (a clustered broker, unfenced)."""
        for server in self.servers.values():
            server.open()

    def _stop_on_log_dir_failure(self) -> None:
        """In a cluster, a broker whose log directory failed stops (Kafka halts a broker
        whose log dirs have all failed): its leaderships and ISR places then move to
        replicas that can still write, instead of the partitions refusing every write."""
        loop = asyncio.get_running_loop()
        failure: asyncio.Future[None] = loop.create_future()
        self.log_dir_failure = failure

        def failed(reason: str) -> None:
            if failure.done():
                return
            log.critical(
                "broker %d must stop: its log dir %s failed (%s); the controller moves "
                "its partitions to in-sync replicas. Free space or fix the disk, then "
                "start it again: it catches up from the leaders.",
                self.node_id, self.config.log_dir, reason,
            )  # fmt: skip
            failure.set_exception(LogDirFailedError(f"log dir {self.config.log_dir}: {reason}"))

        def from_any_thread(reason: str) -> None:
            loop.call_soon_threadsafe(failed, reason)

        self.logs.state.on_offline(from_any_thread)

    def _authorizer(self) -> Authorizer | None:
        config = self.config
        if not config.authorizer_class_name:
            return None
        store: AclStore
        if self.cluster_node is not None:  # the ACLs of the metadata log
            store = ClusterAclStore(self.cluster_node)
        else:
            try:
                store = FileAclStore(config.log_dir)
            except AclStoreError as exc:
                raise BrokerConfigError(str(exc)) from None
        log.info(
            "ACL authorizer on: %d ACLs, super.users %s, allow.everyone.if.no.acl.found=%s",
            len(store.bindings()),
            ", ".join(sorted(config.super_user_set)) or "none",
            str(config.allow_everyone_if_no_acl_found).lower(),
        )
        return Authorizer(
            store, config.super_user_set, config.allow_everyone_if_no_acl_found
        )

    async def stop(self) -> None:
        if self.cluster_node is not None:
            await self.cluster_node.stop()
        if self.controller_server is not None:
            await self.controller_server.stop()
        if self.quorum is not None:
            await self.quorum.stop()
        if self.serves_clients:
            await self._stop_broker()
        if self.metrics_endpoint is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.metrics_endpoint.stop)
            self.metrics_endpoint = None
        log.info("node %d stopped", self.node_id)

    async def _stop_broker(self) -> None:
        if self._maintenance:
            self._maintenance.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._maintenance
        if self._maintenance_run is not None:
            await self._maintenance_run  # a pass in progress ends before the logs close
        await self.replicas.stop()
        for server in self.servers.values():
            await server.stop()
        await self.ownership.stop()
        await self.groups.stop()
        self.logs.close()

    async def _maintain(self) -> None:
        """Every ``log.retention.check.interval.ms``, one maintenance pass in a thread.

        A pass fsyncs segments (``flush.ms``) and rewrites three checkpoint
        files with an fsync each; compaction may take seconds. On the event
        loop that stalled every connection of the broker for as long (6% of
        the embedded broker's time in the CDC benchmark).
        """
        interval_s = self.config.log_maintenance_interval_ms / 1000
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(interval_s)
            self._maintenance_run = loop.run_in_executor(None, self._maintain_once)
            await asyncio.shield(self._maintenance_run)
            self._maintenance_run = None

    def _maintain_once(self) -> None:
        try:
            self.logs.run_maintenance(int(time.time() * 1000))  # ends with the checkpoints
        except Exception:
            log.exception("log maintenance failed")


async def run_broker(
    config: BrokerConfig, stop: asyncio.Event, quorum_listener: RaftListener | None = None
) -> None:
    """Run a broker until ``stop`` is set (the CLI's main loop)."""
    broker = Broker(config, quorum_listener)
    await broker.start()
    try:
        stopping = asyncio.ensure_future(stop.wait())
        waits: list[asyncio.Future[Any]] = [stopping]
        if broker.quorum is not None:
            waits.append(broker.quorum.failure)
        if broker.log_dir_failure is not None:
            waits.append(broker.log_dir_failure)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
    finally:
        await broker.stop()
    # A failed log dir, else a failed quorum, ends the process non-zero. A full disk
    # fails both (the metadata log shares it): each exception is fetched, so asyncio
    # does not log the other one as "never retrieved", and the log dir's is raised.
    candidates = [broker.log_dir_failure, broker.quorum.failure if broker.quorum else None]
    failures = [f for f in candidates if f is not None and f.done() and f.exception()]
    if failures:
        failures[0].result()  # LogDirFailedError or QuorumFailedError
