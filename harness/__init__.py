"""Real servers on free ports, for the tests and the benchmarks alike.

Not shipped (``pyproject.toml`` packages only the product); ``tests/`` and
``bench/`` both import it, so a benchmark never imports a test module::

    broker_process      a ``sluice broker`` process (and ``free_port``)
    standalone_process  a ``sluice standalone`` process and its REST API
    postgres            a throwaway PostgreSQL cluster (initdb, logical decoding)
    mosquitto           a Mosquitto MQTT broker (plain, TLS, authenticated)
    s3_server           moto's S3-compatible HTTP server
    mqtt_pipeline       an MQTT source pipeline in a standalone worker
    wait                ``wait_for``: poll a check until it holds, or fail naming it
"""
