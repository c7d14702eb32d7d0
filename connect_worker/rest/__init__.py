"""The worker's REST API (FastAPI): Kafka Connect's endpoints over the herder."""

from connect_worker.rest.app import create_app

__all__ = ["create_app"]
