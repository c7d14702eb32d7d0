"""The worker's own security: TLS of the REST listeners (:mod:`.rest_tls`), the users
of the REST API's basic authentication (:mod:`.jaas_file`) and the hiding of
secrets in what leaves the worker (:mod:`.redaction`)."""
