"""The worker's metrics: what runners measure (:mod:`.task_metrics`), plugins' own
(:mod:`.plugin_metrics`), and their Prometheus rendering (:mod:`.collector`)."""
