"""Pure logic of network emulation: units, profiles, link names, seed 002, rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from casslab.core.errors import UsageError
from casslab.net import rules
from casslab.net.errors import NetSpecError
from casslab.net.linkcheck import check_options, percentile, wire_rate
from casslab.net.linkprofiles import (
    BUILTIN_LINK_PROFILES,
    LinkConditions,
    load_link_profiles,
    parse_field,
    resolve_link_profile,
)
from casslab.net.spec import (
    NetSpec,
    all_links,
    node_pairs,
    parse_link_name,
    parse_link_option,
)

ADDR = {"client": "127.0.0.1", "node1": "127.0.1.1", "node2": "127.0.1.2",
        "node3": "127.0.1.3"}


def test_condition_fields_in_their_units() -> None:
    assert parse_field("delay", "10ms", "") == ("delay_ms", 10)
    assert parse_field("delay", "1.5s", "") == ("delay_ms", 1500)
    assert parse_field("jitter", "250us", "") == ("jitter_ms", 0.25)
    assert parse_field("delay_ms", 3, "") == ("delay_ms", 3)
    assert parse_field("rate", "7.21mbit", "") == ("rate_mbit", pytest.approx(7.21))
    assert parse_field("rate", "1gbit", "") == ("rate_mbit", 1000)
    assert parse_field("rate", "750kbit", "") == ("rate_mbit", 0.75)
    assert parse_field("rate", "5MB/s", "") == ("rate_mbit", 40)
    assert parse_field("rate_mbit", 100, "") == ("rate_mbit", 100)
    assert parse_field("loss", "0.5%", "") == ("loss_pct", 0.5)
    assert parse_field("loss_pct", 2, "") == ("loss_pct", 2)
    for name, bad in (("delay", "10 parsecs"), ("rate", "fast"), ("loss", "101%"),
                      ("delay", "-1ms"), ("delay", "61s"), ("rate", "1kbit")):
        with pytest.raises(NetSpecError, match=f"^x: {name}: "):
            parse_field(name, bad, "x")


@pytest.mark.parametrize(("name", "value", "hint"), [
    ("delay", "10", "add a unit, e.g. 10ms or 10s"),
    ("loss", "1", "add a unit, e.g. 1%"),
    ("rate", "10", "add a unit, e.g. 10Mbit or 10MB/s"),
    ("rate", "10mbps", "write Mbit for bits/s or MB/s for bytes/s"),
])
def test_short_names_refuse_bare_numbers_and_mbps(name: str, value: str, hint: str) -> None:
    with pytest.raises(NetSpecError, match=f"link node1-node2: {name}: .*{hint}"):
        NetSpec(links=(("node1-node2", {name: value}),)).resolve(3)


def test_error_names_field_and_valid_values() -> None:
    with pytest.raises(NetSpecError, match=r"link node1-node2: delay: 'soon' is not a "
                                           r"duration \(e\.g\. 10ms"):
        NetSpec(links=(("node1-node2", {"delay": "soon"}),)).resolve(3)
    with pytest.raises(NetSpecError, match=r"unknown field.*valid: delay_ms"):
        NetSpec(all={"latency": 3}).resolve(3)
    with pytest.raises(UsageError, match=r"unknown link profile 'lte'.*valid: loopback"):
        resolve_link_profile("lte")
    with pytest.raises(NetSpecError, match="cc: 'vegas' is not one of cubic, bbr, reno"):
        NetSpec(cc="vegas").resolve(3)


def test_builtin_profiles_have_sources_and_reference_values() -> None:
    assert BUILTIN_LINK_PROFILES["loopback"].conditions.is_clean
    edge = BUILTIN_LINK_PROFILES["edge"].conditions
    assert (edge.delay_ms, edge.jitter_ms, edge.rate_mbit) == (7.5, 2.5, 1000.0)
    g4 = BUILTIN_LINK_PROFILES["4g"].conditions
    assert (g4.delay_ms, g4.jitter_ms, g4.rate_mbit) == (45.0, 5.0, 7.21)
    for name in ("ethernet", "wifi", "wifi-congested", "5g", "wan"):
        assert name in BUILTIN_LINK_PROFILES
    assert all(p.source for p in BUILTIN_LINK_PROFILES.values())


def test_user_profiles_yaml(tmp_path: Path) -> None:
    f = tmp_path / "links.yaml"
    f.write_text("profiles:\n  lora:\n    delay_ms: 300\n    rate_mbit: 0.05\n"
                 "    loss_pct: 2\n    loss_burst: 4\n    source: my field test\n")
    p = load_link_profiles(f)["lora"]
    assert p.conditions == LinkConditions(300, 0, 2, 4, 0.05)
    assert p.source == "my field test"
    f.write_text("profiles:\n  bad:\n    delay_ms: -3\n")
    with pytest.raises(NetSpecError,
                       match=r"links.yaml:3: profiles.bad.delay_ms: -3 is negative"):
        load_link_profiles(f)


def test_link_names() -> None:
    assert parse_link_name("node1-node2", 3) == [("node1", "node2"), ("node2", "node1")]
    assert parse_link_name("client-to-node3", 3) == [("client", "node3")]
    assert parse_link_name("node2->client", 3) == [("node2", "client")]
    assert parse_link_name("1<->2", 3) == [("node1", "node2"), ("node2", "node1")]
    assert len(parse_link_name("all", 3)) == len(all_links(3)) == 12
    with pytest.raises(NetSpecError, match=r"unknown endpoint 'node4'.*valid: client, node1"):
        parse_link_name("node1-node4", 3)
    with pytest.raises(NetSpecError, match="itself"):
        parse_link_name("node1-node1", 3)
    with pytest.raises(NetSpecError, match="not a link"):
        parse_link_name("node1", 3)


def test_seed_002_notation() -> None:
    assert node_pairs(3) == [(1, 2), (2, 3), (1, 3)]
    assert node_pairs(4) == [(1, 2), (2, 3), (3, 4), (1, 3), (2, 4), (1, 4)]
    t = NetSpec(client_delay_ms="10ms,20ms,30ms", node_delay_ms="5ms,6ms,7ms").resolve(3)
    assert t[("client", "node2")].delay_ms == 20 == t[("node2", "client")].delay_ms
    assert t[("node1", "node2")].delay_ms == 5
    assert t[("node3", "node2")].delay_ms == 6
    assert t[("node1", "node3")].delay_ms == 7
    one = NetSpec(node_delay_ms="4ms").resolve(3)
    assert {one[k].delay_ms for k in one if "client" not in k} == {4}
    with pytest.raises(NetSpecError, match="client_delay_ms: 2 values given; this lab needs 3"):
        NetSpec(client_delay_ms="1ms,2ms").resolve(3)


def test_layering_profile_then_all_then_links() -> None:
    spec = NetSpec(profile="edge", all={"loss_pct": 1},
                   links=(("client-to-node1", {"profile": "4g"}),
                          ("node1-node2", {"rate": "unlimited", "delay": "1ms"})))
    t = spec.resolve(3)
    assert t[("node2", "node3")] == LinkConditions(7.5, 2.5, 1.0, 1.0, 1000.0)
    assert t[("client", "node1")] == BUILTIN_LINK_PROFILES["4g"].conditions
    assert t[("node1", "client")].delay_ms == 7.5
    assert t[("node2", "node1")].rate_mbit is None and t[("node2", "node1")].delay_ms == 1
    # Changing one link keeps the others (what `net set` without --replace does).
    t2 = NetSpec(links=(("node2-node3", {"delay": "30ms"}),)).resolve(3, base=t)
    assert t2[("node3", "node2")].delay_ms == 30
    assert t2[("client", "node1")] == t[("client", "node1")]


def test_yaml_spec(tmp_path: Path) -> None:
    f = tmp_path / "spec.yaml"
    f.write_text("profile: wifi\ncc: bbr\nseed: 9\nclient_delay_ms: [10, 20, 30]\n"
                 "node_delay_ms: [5, 5, 10]\nlinks:\n  node1-node2: {loss_pct: 2, "
                 "loss_burst: 3}\n")
    spec = NetSpec.from_yaml(f)
    assert spec.cc == "bbr" and spec.seed == 9
    t = spec.resolve(3)
    assert t[("client", "node3")].delay_ms == 30
    assert t[("node1", "node2")].loss_pct == 2 and t[("node1", "node2")].loss_burst == 3
    assert t[("node1", "node2")].jitter_ms == BUILTIN_LINK_PROFILES["wifi"].conditions.jitter_ms
    f.write_text("profile: wifi\nlatency: 3\n")
    with pytest.raises(NetSpecError, match=r"spec.yaml:2: latency: unknown key"):
        NetSpec.from_yaml(f)


def test_link_option() -> None:
    assert parse_link_option("node1-node2:delay=10ms,loss=1%", 3) == (
        "node1-node2", {"delay": "10ms", "loss": "1%"})
    with pytest.raises(NetSpecError, match="expected LINK:field=value"):
        parse_link_option("node1-node2", 3)
    with pytest.raises(NetSpecError, match="'delay' is not field=value"):
        parse_link_option("node1-node2:delay", 3)


def test_rules_from_table() -> None:
    t = NetSpec(links=(("client-to-node1", {"delay": "5ms"}),
                       ("node2-to-node3", {"rate": "10mbit"}),
                       ("node1-to-node3", {"loss": "1%"}))).resolve(3)
    marks = rules.link_marks(3)
    assert marks[("client", "node1")] == 0x0CA50001
    assert marks[("node1", "node3")] == 0x0CA5000B
    assert len(set(marks.values())) == 12 and all(m >> 16 == 0x0CA5 for m in marks.values())
    ids = {"node1": "casslab/x/node1", "node3": "casslab/x/node3"}
    text = rules.iptables_restore(t, ADDR, 0, ids)
    lines = text.splitlines()
    assert lines[:3] == ["*mangle", ":CASSLAB_NET - [0:0]", ":CASSLAB_NET_OUT - [0:0]"]
    assert ":CASSLAB_NET_N3 - [0:0]" in lines and lines[-1] == "COMMIT"
    queued = [x for x in lines if "NFQUEUE" in x]
    assert queued == [
        "-A CASSLAB_NET -m mark --mark 0xca50001 -j NFQUEUE --queue-num 0 --queue-bypass",
        "-A CASSLAB_NET -m mark --mark 0xca5000b -j NFQUEUE --queue-num 0 --queue-bypass",
    ]
    out = [x for x in lines if x.startswith("-A CASSLAB_NET_OUT")]
    assert out == [
        "-A CASSLAB_NET_OUT -m connmark --mark 0 -m conntrack --ctdir ORIGINAL "
        "-m cgroup --path casslab/x/node1 -j CONNMARK --set-mark 1",
        "-A CASSLAB_NET_OUT -m connmark --mark 0 -m conntrack --ctdir ORIGINAL "
        "-m cgroup --path casslab/x/node3 -j CONNMARK --set-mark 3",
        "-A CASSLAB_NET_OUT -m connmark --mark 0 -j CASSLAB_NET_C",
        "-A CASSLAB_NET_OUT -m connmark --mark 1 -j CASSLAB_NET_N1",
        "-A CASSLAB_NET_OUT -m connmark --mark 2 -j CASSLAB_NET_N2",
        "-A CASSLAB_NET_OUT -m connmark --mark 3 -j CASSLAB_NET_N3",
    ]
    # node1->node3 travels on node1's connections (ORIGINAL) and node3's (REPLY).
    assert ("-A CASSLAB_NET_N1 -m conntrack --ctdir ORIGINAL -d 127.0.1.3/32 "
            "-j MARK --set-mark 0xca5000b") in lines
    assert ("-A CASSLAB_NET_N3 -m conntrack --ctdir REPLY -s 127.0.1.1/32 "
            "-j MARK --set-mark 0xca5000b") in lines
    assert ("-A CASSLAB_NET_C -s 127.0.0.1/32 -d 127.0.1.1/32 -j MARK --set-mark 0xca50001"
            in lines)
    assert not any(x.startswith("-A CASSLAB_NET_N1") and "0xca50009" in x for x in lines)
    tc = rules.tc_batch(t, ADDR)
    assert tc[0] == "qdisc add dev lo root handle 1: htb r2q 1000 direct_qlen 10000"
    assert "class add dev lo parent 1: classid 1:a htb rate 10000kbit ceil 10000kbit" in tc
    assert "qdisc add dev lo parent 1:a handle a: bfifo limit 64kb" in tc
    # One classic-BPF filter: load skb->mark, mark 0xca50009 -> class 1:a, else no match.
    assert tc[-1] == ('filter add dev lo parent 1: protocol ip prio 1 bpf bytecode '
                      '"4,32 0 0 4294963220,21 0 1 212140041,6 0 0 65546,6 0 0 0"')
    assert rules.tc_batch(NetSpec().resolve(3), ADDR) == []
    clean = rules.iptables_restore(NetSpec().resolve(3), ADDR, 0, ids)
    assert "-j MARK" not in clean and "NFQUEUE" not in clean
    cfg = rules.daemon_config(t, ADDR, 5)
    assert cfg["seed"] == 5
    assert cfg["links"][0] == {"mark": 0x0CA50001, "name": "client->node1", "delay_us": 5000,
                               "jitter_us": 0, "loss_pct": 0.0, "loss_burst": 1.0}
    assert len(cfg["links"]) == 2


def test_probe_owner() -> None:
    from casslab.net.linkcheck import owner_of

    ids = {"node1": "casslab/x/node1", "node2": "casslab/x/node2"}
    assert owner_of(("node1", "node2"), ids) == "node1"
    assert owner_of(("node2", "node1"), ids) == "node2"
    assert owner_of(("client", "node1"), ids) is None
    assert owner_of(("node1", "client"), ids) is None
    assert owner_of(("node3", "node1"), ids) is None  # no identity cgroup


def test_measure_helpers() -> None:
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile(list(map(float, range(1, 101))), 99) == 99.0
    assert wire_rate(9.564, 1448) == pytest.approx(10.0, rel=1e-3)


# (file text, start of the message after the file name)
NET_BAD = [
    ("profile: wifi\nseed: 2.5\n", ":2: seed: 2.5 is a fraction, not an integer"),
    ("seed: true\n", ":1: seed: True is a boolean, not an integer"),
    ("cc: bbrr\n", ":1: cc: 'bbrr' is not a valid congestion control (did you mean bbr?)"),
    ("links:\n  node1-node2:\n    delay_ms: .nan\n",
     ":3: links.node1-node2.delay_ms: .nan is not a finite number"),
    ("links:\n  node1-node2:\n    dealy_ms: 3\n",
     ":3: links.node1-node2.dealy_ms: unknown field (did you mean delay_ms?)"),
    ("all:\n  loss_pct: 150\n", ":2: all.loss_pct: 150 is over 100%"),
    ("links:\n  node1-node2: 5\n", ":2: links.node1-node2: must be a mapping of fields"),
    ("client_delay_ms: [1ms, soon]\n", ":1: client_delay_ms[1]: 'soon' is not a duration"),
    ("profile: wifi\nprofile: 4g\n", ":2: profile: is given twice"),
    ("profile: [wifi\n", ":2: not valid YAML"),
]


@pytest.mark.parametrize(("text", "message"), NET_BAD)
def test_link_spec_errors_name_file_line_and_field(tmp_path: Path, text: str,
                                                   message: str) -> None:
    f = tmp_path / "spec.yaml"
    f.write_text(text)
    with pytest.raises(NetSpecError) as info:
        NetSpec.from_yaml(f)
    assert str(info.value).startswith(f"{f}{message}"), str(info.value)
    assert "\n" not in str(info.value)


PROFILES_BAD = [
    ("profiles:\n  lora:\n    delay_ms: .inf\n",
     ":3: profiles.lora.delay_ms: .inf is not a finite number"),
    ("profiles:\n  lora:\n    loss: true\n", ":3: profiles.lora.loss: True is not a percentage"),
    ("profiles:\n  lora:\n    latency: 3\n",
     ":3: profiles.lora.latency: unknown field (valid: delay_ms"),
    ("profile:\n  lora: {}\n", ":1: (top level): expected a mapping `profiles:"),
    ("profiles:\n  lora: 3\n", ":2: profiles.lora: profile 'lora' must be a mapping"),
]


@pytest.mark.parametrize(("text", "message"), PROFILES_BAD)
def test_link_profile_file_errors_name_file_line_and_field(tmp_path: Path, text: str,
                                                           message: str) -> None:
    f = tmp_path / "links.yaml"
    f.write_text(text)
    with pytest.raises(NetSpecError) as info:
        load_link_profiles(f)
    assert str(info.value).startswith(f"{f}{message}"), str(info.value)


def test_link_names_without_a_lab_size_are_checked_for_their_form_only() -> None:
    assert parse_link_name("node7-node9", None) == [("node7", "node9"), ("node9", "node7")]
    assert parse_link_name("all", None) == []
    with pytest.raises(NetSpecError, match="links an endpoint to itself"):
        parse_link_name("node1-node1", None)
    with pytest.raises(NetSpecError, match="unknown endpoint 'router'"):
        parse_link_name("router-node1", None)


@pytest.mark.parametrize(("spec", "named"), [
    (NetSpec(cc="vegas"), "vegas"), (NetSpec(profile="dialup"), "dialup"),
    (NetSpec(all={"rate": "0mbit"}), "0mbit"),
    (NetSpec(links=(("node1-node2", {"dly": "5ms"}),)), "dly"),
    (NetSpec(links=(("a-b", {"delay": "5ms"}),)), "'a'"),
    (NetSpec(links=(("node1-node2", {"profile": "dialup"}),)), "dialup"),
])
def test_a_spec_is_checked_before_the_lab_size_is_known(spec: NetSpec, named: str) -> None:
    with pytest.raises(NetSpecError, match=named):
        spec.check()


def test_a_good_spec_passes_the_check_whatever_the_lab() -> None:
    NetSpec(profile="wifi", all={"delay": "5ms"}, cc="bbr",
            links=(("node5-to-client", {"loss": "1%"}),)).check()


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"pings": 0}, "--pings: 0"), ({"loss_packets": -1}, "--loss-packets: -1"),
    ({"bandwidth_s": float("nan")}, "--bandwidth-seconds: nan"),
    ({"bandwidth_s": float("inf")}, "--bandwidth-seconds: inf"),
    ({"links": ["x-y"]}, "unknown endpoint 'x'"),
])
def test_probe_settings_are_named_as_options(kwargs: dict[str, Any], named: str) -> None:
    settings: dict[str, Any] = {"links": None, "pings": 200, "loss_packets": 2000,
                                "bandwidth_s": 2.0, **kwargs}
    with pytest.raises(NetSpecError, match=named):
        check_options(**settings)


def test_a_link_spec_file_linking_an_endpoint_to_itself_is_refused_on_reading(
        tmp_path: Path) -> None:
    f = tmp_path / "n.yaml"
    f.write_text("links:\n  node2-to-2: {delay_ms: 5}\n")
    with pytest.raises(NetSpecError, match=r"n\.yaml:2: links\.node2-to-2: links an "
                       "endpoint to itself"):
        NetSpec.from_yaml(f)


def test_a_link_spec_file_takes_seed_002_delays_as_one_comma_list(tmp_path: Path) -> None:
    f = tmp_path / "n.yaml"
    f.write_text('client_delay_ms: "10ms,20ms,30ms"\nnode_delay_ms: 5,5,10\n')
    table = NetSpec.from_yaml(f).resolve(3)
    assert table[("client", "node3")].delay_ms == 30
    assert table[("node1", "node3")].delay_ms == 10


def test_ethernet_100_is_fast_ethernet_with_a_switch_hop() -> None:
    cond = BUILTIN_LINK_PROFILES["ethernet-100"].conditions
    assert cond.rate_mbit == 100.0
    assert 0.1 <= cond.delay_ms <= 0.2
    assert "802.3u" in BUILTIN_LINK_PROFILES["ethernet-100"].source


def test_wifi_is_one_shared_medium_and_wifi_independent_is_not() -> None:
    t = NetSpec(profile="wifi").resolve(3)
    assert all(c.shared and c.medium == "wifi" for c in t.values())
    cfg = rules.daemon_config(t, ADDR, 1)
    assert cfg["groups"] == [{"id": 1, "name": "wifi", "rate_bit_s": 40_000_000,
                              "queue_limit_bytes": 65536}]
    assert {x["group"] for x in cfg["links"]} == {1}
    assert len(cfg["links"]) == len(t)
    # The medium's budget is the daemon's: no htb class of its own per link.
    assert rules.tc_batch(t, ADDR) == []
    t = NetSpec(profile="wifi-independent").resolve(3)
    assert not any(c.shared for c in t.values())
    assert "groups" not in str(rules.daemon_config(t, ADDR, 1)["links"])
    assert len([x for x in rules.tc_batch(t, ADDR) if "class add" in x]) == len(t)


def test_a_medium_links_and_rates_from_the_spec() -> None:
    spec = NetSpec(links=(("client-node1", {"medium": "air", "rate": "20mbit"}),
                          ("client-node2", {"medium": "air", "rate": "20mbit"}),
                          ("node1-node2", {"rate": "5mbit"})))
    t = spec.resolve(2)
    cfg = rules.daemon_config(t, {"client": "127.0.0.1", "node1": "127.0.1.1",
                                  "node2": "127.0.1.2"}, 1)
    assert [g["name"] for g in cfg["groups"]] == ["air"]
    assert len([x for x in cfg["links"] if x.get("group") == 1]) == 4
    # medium: none takes a link off the wifi channel.
    t = NetSpec(profile="wifi", links=(("node1-node2", {"medium": "none"}),)).resolve(2)
    assert t[("node1", "node2")].medium is None and t[("client", "node1")].shared


@pytest.mark.parametrize(("fields", "message"), [
    ({"medium": "Wi Fi"}, "link client-node1: medium: 'Wi Fi' is not a medium name (valid: "
                          "none, or lowercase letters, digits, - and _, e.g. wifi)"),
    ({"medium": "wifi", "rate": "5mbit"}, "medium 'wifi': links give it different rates "
                                          "(client->node1 5 Mbit/s, client->node2 40 Mbit/s)"),
])
def test_bad_media_are_named(fields: dict[str, str], message: str) -> None:
    spec = NetSpec(profile="wifi", links=(("client-node1", fields),))
    with pytest.raises(NetSpecError) as err:
        spec.resolve(2)
    assert message in str(err.value)
