"""Replication: the KRaft-style Raft core (``raft/``) for the metadata quorum.

ISR replication of partitions and the controller come later (DESIGN.md decisions 4, 11).
"""
