"""Render one node's cassandra.yaml, logback.xml and JVM command line.

The base config is small on purpose: Cassandra's defaults for everything else,
plus the settings a lab on a small machine needs (its own directories and
addresses, evenly spaced tokens so nodes can join at once, no auto snapshots
that would fill a small disk between trials, as seed 000 found).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from casslab.cassandra.cql import NATIVE_PORT
from casslab.cassandra.distribution import Distribution
from casslab.core.errors import UsageError

DEFAULT_NUM_TOKENS = 16
STORAGE_PORT = 7000

# From Cassandra's conf/jvm17-server.options: the JPMS openings Cassandra 5 needs on Java 17.
JPMS_OPTIONS = [
    "-Djdk.attach.allowAttachSelf=true",
    *(
        f"--add-exports={m}=ALL-UNNAMED"
        for m in [
            "java.base/jdk.internal.misc",
            "java.management.rmi/com.sun.jmx.remote.internal.rmi",
            "java.rmi/sun.rmi.registry",
            "java.rmi/sun.rmi.server",
            "java.sql/java.sql",
            "java.base/java.lang.ref",
            "jdk.unsupported/sun.misc",
            "jdk.compiler/com.sun.tools.javac.file",
            "jdk.attach/sun.tools.attach",
        ]
    ),
    *(
        f"--add-opens={m}=ALL-UNNAMED"
        for m in [
            "java.base/java.lang.module",
            "java.base/jdk.internal.loader",
            "java.base/jdk.internal.ref",
            "java.base/jdk.internal.reflect",
            "java.base/jdk.internal.math",
            "java.base/jdk.internal.module",
            "java.base/jdk.internal.util.jar",
            "jdk.management/com.sun.management.internal",
            "java.base/sun.nio.ch",
            "java.base/java.io",
            "java.base/java.lang.reflect",
            "jdk.compiler/com.sun.tools.javac",
            "java.base/java.lang",
            "java.base/java.util",
        ]
    ),
]

# Cassandra's G1 defaults (jvm17-server.options), minus the 16 MB region size that
# would leave a 512 MB Pi heap with only 32 regions.
GC_OPTIONS = [
    "-XX:+UseG1GC",
    "-XX:+ParallelRefProcEnabled",
    "-XX:MaxTenuringThreshold=1",
    "-XX:G1RSetUpdatingPauseTimePercent=5",
    "-XX:MaxGCPauseMillis=300",
    "-XX:InitiatingHeapOccupancyPercent=70",
]

# facts.md: these make a fresh multi-node lab join in seconds instead of minutes. The
# ring delay is also how long a joining node's first gossip round waits for the seed:
# 1 s was too short on a CPU-starved machine ("Unable to gossip with any peers"), and
# with auto_bootstrap off nothing else sleeps for it, so 10 s costs nothing when idle.
FAST_START_OPTIONS = [
    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
    "-Dcassandra.ring_delay_ms=10000",
    "-Dcassandra.consistent.rangemovement=false",
]

LOGBACK_XML = """<configuration scan="false">
  <appender name="SYSTEMLOG" class="ch.qos.logback.core.FileAppender">
    <file>{log_dir}/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <logger name="org.apache.cassandra" level="INFO"/>
  <root level="INFO"><appender-ref ref="SYSTEMLOG"/></root>
</configuration>
"""


@dataclass(frozen=True)
class NodeLayout:
    """Where one node lives: its number, address and directory."""

    index: int
    address: str
    directory: Path

    @property
    def name(self) -> str:
        return f"node{self.index}"

    @property
    def conf_dir(self) -> Path:
        return self.directory / "conf"

    @property
    def log_dir(self) -> Path:
        return self.directory / "logs"

    @property
    def system_log(self) -> Path:
        return self.log_dir / "system.log"

    @property
    def stdout_log(self) -> Path:
        return self.log_dir / "stdout.log"


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """Turn `--set key=value` items into a nested dict; values are YAML scalars or lists.

    `a.b=1` sets `{'a': {'b': 1}}`. Raises UsageError for an item without '='.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set '{item}': expected key=value (e.g. concurrent_writes=16)")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        target = out
        parts = key.strip().split(".")
        for part in parts[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise UsageError(f"--set '{item}': '{part}' is already set to a scalar")
        target[parts[-1]] = value
    return out


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """A copy of base with over's keys replacing or merging into it."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def even_tokens(node_count: int, node_index: int, num_tokens: int) -> list[int]:
    """Murmur3 tokens for node `node_index` (1-based): the ring cut into N*T equal
    slices, dealt round-robin, so every node owns the same share and nodes can
    join at the same time without the token allocator seeing each other."""
    total = node_count * num_tokens
    step = 2**64 // total
    return [-(2**63) + (j * node_count + node_index - 1) * step for j in range(num_tokens)]


def render_cassandra_yaml(
    *,
    lab_name: str,
    node: NodeLayout,
    node_count: int,
    seeds: list[str],
    overrides: dict[str, Any],
) -> dict[str, Any]:
    """The node's cassandra.yaml as a dict: base settings, then `overrides` on top."""
    num_tokens = int(overrides.get("num_tokens", DEFAULT_NUM_TOKENS))
    d = node.directory
    base: dict[str, Any] = {
        "cluster_name": f"casslab-{lab_name}",
        "num_tokens": num_tokens,
        "initial_token": ",".join(str(t) for t in even_tokens(node_count, node.index, num_tokens)),
        "partitioner": "org.apache.cassandra.dht.Murmur3Partitioner",
        "endpoint_snitch": "SimpleSnitch",
        "commitlog_sync": "periodic",
        "commitlog_sync_period": "10000ms",
        "data_file_directories": [str(d / "data")],
        "commitlog_directory": str(d / "commitlog"),
        "saved_caches_directory": str(d / "saved_caches"),
        "hints_directory": str(d / "hints"),
        "cdc_raw_directory": str(d / "cdc_raw"),
        "seed_provider": [
            {
                "class_name": "org.apache.cassandra.locator.SimpleSeedProvider",
                "parameters": [{"seeds": ",".join(f"{s}:{STORAGE_PORT}" for s in seeds)}],
            }
        ],
        "listen_address": node.address,
        "rpc_address": node.address,
        "storage_port": STORAGE_PORT,
        "native_transport_port": NATIVE_PORT,
        "start_native_transport": True,
        # A fresh lab has no data to stream; the tokens above are already balanced.
        "auto_bootstrap": False,
        # Snapshots on TRUNCATE/DROP between trials would fill a small node's disk.
        "auto_snapshot": False,
    }
    return deep_merge(base, overrides)


def jvm_command(
    dist: Distribution, node: NodeLayout, heap_mib: int, extra_jvm: list[str]
) -> list[str]:
    """The full `java ... CassandraDaemon` command line for a node."""
    cmd = [
        dist.java,
        f"-Xms{heap_mib}m",
        f"-Xmx{heap_mib}m",
        "-Xss256k",
        "-XX:+PerfDisableSharedMem",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djava.net.preferIPv4Stack=true",
        *GC_OPTIONS,
        *JPMS_OPTIONS,
        "-Dio.netty.tryReflectionSetAccessible=true",
        *FAST_START_OPTIONS,
        f"-Dcassandra.config=file://{node.conf_dir / 'cassandra.yaml'}",
        f"-Dlogback.configurationFile={node.conf_dir / 'logback.xml'}",
        f"-Dcassandra.logdir={node.log_dir}",
        f"-Dcassandra.storagedir={node.directory}",
        "-Dcassandra-foreground=yes",
        f"-Dcasslab.node={node.name}",
    ]
    if dist.jamm_jar is not None:
        cmd.append(f"-javaagent:{dist.jamm_jar}")
    cmd += extra_jvm
    cmd += ["-cp", dist.classpath, "org.apache.cassandra.service.CassandraDaemon"]
    return cmd


def write_node_files(node: NodeLayout, config: dict[str, Any]) -> None:
    """Create the node's directories and write cassandra.yaml and logback.xml."""
    for sub in ("conf", "logs", "data", "commitlog", "saved_caches", "hints", "cdc_raw"):
        (node.directory / sub).mkdir(parents=True, exist_ok=True)
    (node.conf_dir / "cassandra.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (node.conf_dir / "logback.xml").write_text(LOGBACK_XML.format(log_dir=node.log_dir))
