"""The bundled log engine: storage, the Kafka wire protocol, the broker and its client.

Nothing here imports ``connect_worker``, ``connectors`` or ``transforms``.
"""
