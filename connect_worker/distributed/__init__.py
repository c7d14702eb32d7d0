"""Kafka Connect distributed mode: group membership, its protocol bytes and assignment."""
