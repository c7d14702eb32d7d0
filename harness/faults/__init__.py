"""Fault injection against a real cluster: workload history, nemesis, checker.

``history`` records what clients were told (sent, acknowledged, failed, consumed);
``nemesis`` kills, pauses and restarts nodes on a seeded schedule and logs it;
``workload`` runs the producers and the consumer; ``replica_logs`` reads each
node's partition logs with the storage layer; ``checker`` compares the history
with the final logs and names every violation.
"""
