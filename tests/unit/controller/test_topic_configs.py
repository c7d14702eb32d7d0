"""IncrementalAlterConfigs of topics at the controller: ConfigRecords for changed keys."""

from __future__ import annotations

from log_engine.controller import TopicConfigChange
from log_engine.errors import ErrorCode
from tests.unit.controller.harness import Harness


def _alter(h: Harness, *changes: TopicConfigChange, validate_only: bool = False):  # type: ignore[no-untyped-def]
    return h.commit(h.controller.alter_topic_configs(changes, validate_only))


def test_set_and_delete_change_the_image_and_bad_values_are_refused() -> None:
    h = Harness()
    h.start_brokers(1, 2, 3)
    h.create("orders", configs={"retention.ms": "60000"})
    (done,) = _alter(
        h, TopicConfigChange("orders", {"min.insync.replicas": "2"}, ("retention.ms",))
    )
    assert done.error_code == 0
    assert h.image.topic_configs("orders") == {"min.insync.replicas": "2"}
    (checked,) = _alter(h, TopicConfigChange("orders", {"segment.ms": "1"}), validate_only=True)
    assert checked.error_code == 0 and "segment.ms" not in h.image.topic_configs("orders")
    bad, unknown = _alter(
        h,
        TopicConfigChange("orders", {"unclean.leader.election.enable": "maybe"}),
        TopicConfigChange("nope", {"retention.ms": "1"}),
    )
    assert bad.error_code == ErrorCode.INVALID_CONFIG
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert h.image.topic_configs("orders") == {"min.insync.replicas": "2"}
