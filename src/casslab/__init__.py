"""casslab: a performance lab for Apache Cassandra on constrained, edge and cloud deployments."""

__version__ = "0.1.0"
