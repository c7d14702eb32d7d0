"""The ``sluice`` command: one module per sub-command, above the worker.

::

    main                  the parser and ``main()`` (entry point ``sluice``)
    broker                ``sluice broker`` and standalone's embedded broker
    standalone            ``sluice standalone``: broker, herder, REST, watcher wired
    log_commands          ``sluice topics|produce|consume|groups``
    security_commands     ``sluice acls|users``: ACLs and SCRAM credentials
    rest_client_commands  ``sluice connectors|plugins|validate``
    top                   ``sluice top``: a live view of tasks from REST and /metrics
    snapshot_progress     a CDC snapshot's progress in ``sluice connectors status``
    progress              progress bars of long commands on stderr (``consume``)
    dry_run               ``sluice test``: converters and transforms on sample records

This package is the only part of ``connect_worker`` that may start a broker
(``log_engine.broker``); the worker below it reaches the log only through
``log_engine.client``.
"""

from connect_worker.cli.main import main

__all__ = ["main"]
