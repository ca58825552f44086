"""Getting a Cassandra distribution and rendering its configuration."""
