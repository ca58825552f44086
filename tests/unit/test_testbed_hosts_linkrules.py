"""Link conditions on hosts as data: the table's endpoints are the inventory's hosts, and
each host's tc argv, iptables rules and daemon config follow from the resolved table."""

from __future__ import annotations

import pytest

from casslab.net.errors import NetSpecError
from casslab.net.linkprofiles import LinkConditions
from casslab.net.rules import MARK_TAG
from casslab.net.spec import NetSpec
from casslab.testbed.hosts import linkrules
from casslab.testbed.hosts.inventory import Inventory, parse
from casslab.testbed.hosts.linkrules import HostLink

INVENTORY = """\
all:
  children:
    nodes:
      hosts:
        pi1: {ansible_host: 10.0.0.11}
        edge-b: {ansible_host: 10.0.0.12, casslab_data_interface: wlan0}
    clients:
      hosts:
        laptop: {ansible_host: 10.0.0.5, ansible_port: 2222}
        desk: {ansible_host: 10.0.0.6}
"""


def _inv() -> Inventory:
    return parse(INVENTORY, "hosts.yaml")


def _links(spec: NetSpec) -> dict[tuple[str, str], HostLink]:
    return {(k.src.name, k.dst.name): k for k in linkrules.host_links(_inv(), spec)}


def test_nodes_are_node1_to_n_in_order_and_every_other_client_is_the_client() -> None:
    assert linkrules.endpoint_names(_inv()) == {
        "pi1": "node1", "edge-b": "node2", "laptop": "client", "desk": "client"}


def test_host_names_and_table_names_mix_in_one_link() -> None:
    links = _links(NetSpec(links=(("pi1-node2", {"delay_ms": 7}),)))
    assert links[("edge-b", "pi1")].conditions.delay_ms == 7


def test_links_named_by_host_names_mean_the_tables_links_even_with_dashes() -> None:
    links = _links(NetSpec(links=(("pi1-edge-b", {"delay_ms": 20}),
                                  ("laptop-to-pi1", {"loss_pct": 1}))))
    assert links[("pi1", "edge-b")].conditions.delay_ms == 20
    assert links[("edge-b", "pi1")].conditions.delay_ms == 20
    # laptop is the table's client: client->node1 applies to every client host.
    assert links[("laptop", "pi1")].conditions.loss_pct == 1
    assert links[("desk", "pi1")].conditions.loss_pct == 1
    assert links[("pi1", "laptop")].conditions.loss_pct == 0


def test_clients_are_not_linked_to_each_other_and_marks_are_distinct() -> None:
    links = _links(NetSpec(profile="wifi"))
    assert ("laptop", "desk") not in links and ("desk", "laptop") not in links
    assert len(links) == 2 + 2 * 2 * 2
    marks = [k.mark for k in links.values()]
    assert len(set(marks)) == len(marks) and all(m & 0xFFFF0000 == MARK_TAG for m in marks)


def test_an_unknown_host_in_a_link_is_one_error_naming_it() -> None:
    with pytest.raises(NetSpecError, match=r"^link pi1-nosuch: unknown host 'nosuch' "
                       r"\(valid: pi1, edge-b, laptop, desk; or client, node1, node2\)$"):
        linkrules.host_links(_inv(), NetSpec(links=(("pi1-nosuch", {"delay_ms": 5}),)))


def _one(cond: LinkConditions, dst: str = "edge-b") -> list[HostLink]:
    inv = {h.name: h for h in _inv().hosts}
    return [HostLink(inv["pi1"], inv[dst], cond, MARK_TAG | 1)]


def test_tc_builds_htb_per_destination_with_a_netem_leaf_after_the_ssh_filters() -> None:
    argv = linkrules.tc_commands(_one(LinkConditions(delay_ms=20, jitter_ms=2, loss_pct=1,
                                                     rate_mbit=10)), "eth0", [22, 2222],
                                 with_netem=True)
    tc = ["tc"]
    dev = ["dev", "eth0"]
    ssh = [[*tc, "filter", "add", *dev, "parent", "1:", "protocol", "ip", "prio", str(p),
            "u32", "match", "ip", "protocol", "6", "0xff", "match", "ip", f, str(port),
            "0xffff", "flowid", "1:0"] for p, port in ((1, 22), (2, 2222))
           for f in ("sport", "dport")]
    assert argv == [
        [*tc, "qdisc", "replace", *dev, "root", "handle", "1:", "htb", "r2q", "1000"],
        *ssh,
        [*tc, "class", "add", *dev, "parent", "1:", "classid", "1:10", "htb", "rate",
         "10000kbit", "ceil", "10000kbit"],
        [*tc, "qdisc", "add", *dev, "parent", "1:10", "handle", "10:", "netem", "limit",
         "10000", "delay", "20ms", "2ms", "loss", "random", "1%"],
        [*tc, "filter", "add", *dev, "parent", "1:", "protocol", "ip", "prio", "3", "u32",
         "match", "ip", "dst", "10.0.0.12/32", "flowid", "1:10"],
    ]


def test_bursty_loss_becomes_a_gilbert_elliott_model_with_the_same_mean() -> None:
    argv = linkrules.tc_commands(_one(LinkConditions(loss_pct=2, loss_burst=4)), "eth0", [],
                                 with_netem=True)
    leaf = next(a for a in argv if "netem" in a)
    p, r = (float(x.rstrip("%")) / 100 for x in leaf[leaf.index("gemodel") + 1:][:2])
    assert r == pytest.approx(0.25)
    assert p / (p + r) == pytest.approx(0.02)  # the bad state's share: the mean loss


def test_an_unlimited_delayed_link_gets_an_unlimited_class() -> None:
    argv = linkrules.tc_commands(_one(LinkConditions(delay_ms=5)), "eth0", [22],
                                 with_netem=True)
    assert any(a[2:4] == ["add", "dev"] and "rate" in a
               and a[a.index("rate") + 1] == linkrules.UNLIMITED_RATE for a in argv)


def test_without_netem_only_rates_shape_with_a_bfifo_leaf() -> None:
    assert linkrules.tc_commands(_one(LinkConditions(delay_ms=5)), "eth0", [22],
                                 with_netem=False) == []
    argv = linkrules.tc_commands(_one(LinkConditions(delay_ms=5, rate_mbit=2)), "eth0", [22],
                                 with_netem=False)
    assert not any("netem" in a for a in argv)
    assert argv[-2][-3:] == ["bfifo", "limit", "64kb"]


def test_a_clean_table_installs_no_qdisc() -> None:
    assert linkrules.tc_commands(_one(LinkConditions()), "eth0", [22], with_netem=True) == []


def test_links_on_a_shared_medium_borrow_from_one_class_of_its_rate() -> None:
    inv = {h.name: h for h in _inv().hosts}
    wifi = LinkConditions(delay_ms=3, rate_mbit=20, medium="air")
    links = [HostLink(inv["pi1"], inv[d], wifi, MARK_TAG | n)
             for n, d in enumerate(("edge-b", "laptop"), start=1)]
    classes = [a for a in linkrules.tc_commands(links, "eth0", [], with_netem=True)
               if a[1] == "class"]
    assert classes[0][6:9] == ["1:", "classid", "1:10"] and "20000kbit" in classes[0]
    assert [c[6] for c in classes[1:]] == ["1:10", "1:10"]


def test_the_receiver_queues_only_its_conditioned_incoming_links_and_spares_ssh() -> None:
    links = _links(NetSpec(links=(("pi1-edge-b", {"delay_ms": 20}),)))
    into = [k for k in links.values() if k.dst.name == "edge-b"]
    text = linkrules.iptables_restore(into, [22, 2222], 0)
    lines = text.splitlines()
    assert lines[:3] == ["*mangle", ":CASSLAB_NET - [0:0]",
                         "-A CASSLAB_NET -p tcp -m multiport --ports 22,2222 -j RETURN"]
    mark = links[("pi1", "edge-b")].mark
    assert lines[3:5] == [
        f"-A CASSLAB_NET -s 10.0.0.11/32 -d 10.0.0.12/32 -j MARK --set-mark {mark:#x}",
        f"-A CASSLAB_NET -m mark --mark {mark:#x} -j NFQUEUE --queue-num 0 --queue-bypass"]
    assert lines[5:] == ["COMMIT"]
    cfg = linkrules.daemon_config(into, seed=7)
    assert cfg == {"seed": 7, "groups": [], "links": [
        {"mark": mark, "name": "pi1->edge-b", "delay_us": 20000, "jitter_us": 0,
         "loss_pct": 0.0, "loss_burst": 1.0}]}


def test_a_bad_field_names_the_link_as_the_user_wrote_it() -> None:
    with pytest.raises(NetSpecError, match=r"^link pi1-edge-b: "):
        linkrules.checked_for_hosts(NetSpec(links=(("pi1-edge-b", {"delay_ms": -1}),)), _inv())
    ok = linkrules.checked_for_hosts(NetSpec(links=(("pi1-edge-b", {"delay_ms": 1}),)), _inv())
    assert ok.links == (("node1-node2", {"delay_ms": 1}),)


def test_mixed_modes_enforce_each_link_once_at_the_sender_if_tc_else_the_receiver() -> None:
    inv = _inv()
    hosts = {h.name: h for h in inv.hosts}
    links = linkrules.host_links(inv, NetSpec(links=(("pi1-edge-b", {"delay_ms": 20}),)))
    modes = {"pi1": "tc", "edge-b": "netem", "laptop": "netem", "desk": "netem"}

    def plan(name: str) -> linkrules.HostPlan:
        return linkrules.host_plan(hosts[name], links, modes, [22], seed=1, queue_num=0)

    # pi1 (tc) delays pi1->edge-b on its egress; edge-b must not delay it again.
    assert any("netem" in a for a in plan("pi1").tc)
    assert plan("edge-b").tc == []
    # edge-b (netem) sends without a netem qdisc: pi1, whatever its mode, holds
    # edge-b->pi1 in its own casslab-netem.
    daemon = plan("pi1").daemon
    assert daemon is not None and [x["name"] for x in daemon["links"]] == ["edge-b->pi1"]
    assert plan("edge-b").daemon is None and plan("edge-b").iptables is None
    assert plan("laptop") == linkrules.HostPlan([], None, None)
