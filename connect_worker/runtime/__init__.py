"""The runtime: runs the connectors and tasks the herder decides on (see ``worker``)."""
