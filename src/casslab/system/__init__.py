"""System primitives: processes with start ticks, commands, network namespaces."""
