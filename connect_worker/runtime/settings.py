"""The worker settings the runtime uses, read once from :class:`WorkerConfig`.

This is the one place that knows the worker config's field names; the rest
of the runtime takes these small frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from connect_worker.metrics.stats import SampleWindow
from connect_worker.runtime.conversion import ConverterDefaults, ConverterSpec
from connect_worker.runtime.sink_runner import SinkRunnerSettings
from connect_worker.runtime.source_runner import SourceRunnerSettings
from connect_worker.runtime.task_thread import RestartPolicy
from connect_worker.worker_config import WorkerConfig


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    """Everything the worker needs to build and supervise tasks.

    ``producer_props``/``consumer_props``/``admin_props`` are the worker's
    ``producer.*``/``consumer.*``/``admin.*`` keys (prefix stripped) over its
    worker-level ``security.protocol``/``ssl.*``/``sasl.*`` keys; a connector's
    ``producer.override.*``/``consumer.override.*`` go over them.
    """

    bootstrap: str
    converters: ConverterDefaults
    source: SourceRunnerSettings = field(default_factory=SourceRunnerSettings)
    sink: SinkRunnerSettings = field(default_factory=SinkRunnerSettings)
    restart: RestartPolicy = field(default_factory=RestartPolicy)
    task_shutdown_timeout_ms: int = 5000
    retry_backoff_initial_ms: int = 100
    retry_backoff_max_ms: int = 10000
    producer_props: dict[str, str] = field(default_factory=dict)
    consumer_props: dict[str, str] = field(default_factory=dict)
    admin_props: dict[str, str] = field(default_factory=dict)
    metrics_enabled: bool = True
    metrics_window: SampleWindow = field(default_factory=SampleWindow)

    @classmethod
    def from_worker_config(cls, config: WorkerConfig, *, bootstrap: str) -> RuntimeSettings:
        return cls(
            bootstrap=bootstrap,
            converters=ConverterDefaults(
                key=ConverterSpec(config.key_converter, config.converter_props("key.converter")),
                value=ConverterSpec(
                    config.value_converter, config.converter_props("value.converter")
                ),
                header=ConverterSpec(
                    config.header_converter, config.converter_props("header.converter")
                ),
            ),
            source=SourceRunnerSettings(
                offset_flush_interval_ms=config.offset_flush_interval_ms,
                offset_flush_timeout_ms=config.offset_flush_timeout_ms,
            ),
            sink=SinkRunnerSettings(offset_flush_interval_ms=config.offset_flush_interval_ms),
            restart=RestartPolicy(
                enabled=config.task_restart_enabled,
                backoff_initial_ms=config.task_restart_backoff_initial_ms,
                backoff_max_ms=config.task_restart_backoff_max_ms,
            ),
            producer_props={
                **config.client_security_props(),
                **config.converter_props("producer"),
            },
            consumer_props={
                **config.client_security_props(),
                **config.converter_props("consumer"),
            },
            admin_props={**config.client_security_props(), **config.converter_props("admin")},
            metrics_enabled=config.metrics_enabled,
            metrics_window=SampleWindow(
                config.metrics_sample_window_ms / 1000, config.metrics_num_samples
            ),
        )
