"""``ClusterNode``: the cluster wiring of one ``sluice broker`` process with voters configured.

```
 quorum ──commits──► MetadataListener ──► ReplicaStatePublisher ──► ReplicaManager
   ▲                   │ (image)  │        (LocalReplicaState)          │ AlterPartition
   │ append records    │          └─► MetadataSnapshotter               ▼
 ControllerService ◄───┘  ◄── controller listener ◄── ControllerChannel (lifecycle,
 (voters; acts on the leader)                         producer ids, CreateTopics)
```

Every node has the image (voters and observers both follow the quorum). A voter
runs the :class:`ControllerService` (it decides only while it leads). A broker
registers and heartbeats (:class:`BrokerLifecycle`), accepts client connections
once unfenced, applies its replicas' states, sends ISR changes and takes
producer ids from the controller, and answers Metadata and admin requests from
and through it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from log_engine.broker.cluster.alter_partition import ControllerAlterPartitionSender
from log_engine.broker.cluster.channel import ControllerChannel
from log_engine.broker.cluster.controller_service import ControllerService
from log_engine.broker.cluster.lifecycle import BrokerLifecycle
from log_engine.broker.cluster.local_state import LocalReplicaState
from log_engine.broker.cluster.offsets_topic import OffsetsTopic
from log_engine.broker.cluster.producer_ids import ControllerProducerIds
from log_engine.broker.cluster.snapshots import MetadataSnapshotter
from log_engine.broker.config import security_protocol_id
from log_engine.controller import ControllerConfig
from log_engine.metadata.bootstrap import read_bootstrap
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.listener import MetadataListener
from log_engine.metadata.publisher import ReplicaStatePublisher
from log_engine.metadata.records import Endpoint

if TYPE_CHECKING:
    from log_engine.broker.broker import Broker

log = logging.getLogger(__name__)

CONTROLLED_SHUTDOWN_TIMEOUT_MS = 5000
"""How long a SIGTERM waits for the controller to move this broker's leaderships away."""


class ClusterNode:
    """Starts and stops the cluster parts of a broker whose quorum has this listener."""

    def __init__(self, broker: Broker, listener: MetadataListener) -> None:
        assert broker.cluster is not None and broker.quorum is not None
        self._broker = broker
        self.cluster = broker.cluster
        self.quorum = broker.quorum
        self.listener = listener
        config = broker.config
        self.channel = ControllerChannel(
            self.cluster, self.quorum, config.controller_quorum_request_timeout_ms
        )
        self.controller: ControllerService | None = None
        if self.cluster.is_controller:
            self.controller = ControllerService(
                ControllerConfig.model_validate(
                    {
                        "node_id": config.node_id,
                        "cluster_id": self.cluster.cluster_id,
                        "broker_session_timeout_ms": config.broker_session_timeout_ms,
                        "broker_heartbeat_interval_ms": config.broker_heartbeat_interval_ms,
                        "default_replication_factor": config.default_replication_factor,
                        "num_partitions": config.num_partitions,
                        "min_insync_replicas": int(
                            config.log_settings.get("min.insync.replicas", "1")
                        ),
                        "unclean_leader_election_enable": config.unclean_leader_election_enable,
                    }
                ),
                self.quorum,
                listener,
                read_bootstrap(config.log_dir),
            )
        self.snapshotter = MetadataSnapshotter(
            self.quorum, listener, config.metadata_log_max_record_bytes_between_snapshots
        )
        self.lifecycle = BrokerLifecycle(
            config.node_id,
            self.cluster.cluster_id,
            self._endpoints,
            self.channel,
            lambda: self.listener.image.end_offset - 1,
            config.broker_heartbeat_interval_ms,
        )
        self.producer_ids = ControllerProducerIds(self.channel, self.lifecycle)
        self.offsets_topic = OffsetsTopic(self, config)
        self._broker_started = False
        self._serving: asyncio.Task[None] | None = None

    @property
    def image(self) -> MetadataImage:
        """The committed metadata image of this node."""
        return self.listener.image

    def offsets_partition_count(self) -> int:
        """Partitions of the replicated ``__consumer_offsets`` (the group placement)."""
        return self.offsets_topic.partition_count()

    def _endpoints(self) -> tuple[Endpoint, ...]:
        """The advertised client listeners, with their security protocol ids."""
        return tuple(
            Endpoint(a.name, a.host, a.port, security_protocol_id(a.protocol))
            for a in self._broker.advertised_endpoints()
        )

    def start_controller(self) -> None:
        """After the quorum started: snapshots, and on a voter the controller."""
        self.snapshotter.attach()
        if self.controller is not None:
            self.controller.start()

    def start_broker(self) -> None:
        """After the broker's logs and (closed) client listener: register and follow the image."""
        broker = self._broker
        broker.replicas.sender = ControllerAlterPartitionSender(self.channel, self.lifecycle)
        local = LocalReplicaState(broker, self.listener)
        ReplicaStatePublisher(broker.node_id, local, local.removed).attach(self.listener)
        local.attach_elsewhere()
        self.lifecycle.start()
        self._serving = asyncio.get_running_loop().create_task(self._serve_when_unfenced())
        self._broker_started = True

    async def _serve_when_unfenced(self) -> None:
        await self.lifecycle.unfenced.wait()
        self._broker.open_servers()
        log.info("broker %d accepts client connections", self._broker.node_id)

    async def stop(self) -> None:
        """Controlled shutdown (a broker), then the controller's and the lifecycle's tasks."""
        if self._serving is not None:
            self._serving.cancel()
        if self._broker_started:
            await self.lifecycle.shutdown(CONTROLLED_SHUTDOWN_TIMEOUT_MS)
        if self.controller is not None:
            await self.controller.stop()
        await self.snapshotter.stop()
        self.channel.close()
