"""`design.until: verdicts` on a real 1-node lab: an interleaved campaign with a known
effect (2 ms of one-way delay on the client's link, both directions: +4 ms per read's
round trip, the issue's size) and an A/A pair (two request timeouts no read comes near)
stops by itself once both findings are decisive: for the delay, "holds" (its slope at
least the configured round trip and at most 1.5 times it, see the test) and "smaller
than this lab can detect" for the A/A pair, naming the bound.
The response is the median read latency: on a machine shared with other work a trial's
mean carries its stalls. A read's median grows by a little more than the set round trip,
by how much depends on the machine's other load (measured 2026-11-27: 2.06 [2.05, 2.08]
ms per ms of one-way delay at 2 ms on the quiet machine, 8 rounds; 2.18-2.32 while two
campaigns ran beside it); so the test runs alone (`timing`). casslab-netem is not the
cause: its releases were 5 us late on average (its stats file). The A/A pair is compared
where there is no delay: with delay the median is so steady that the measured bound
shrinks with the interval itself and a zero effect stays "inconclusive" (seen at 10 ms:
+0.4 % [-0.3, +1.0] after 14 rounds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.cli.stopping import round_verdicts, until_verdicts, verdict_line
from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.sequential import BY_VERDICTS
from casslab.experiment.spec import parse_spec
from casslab.store.records import Results

from labtools import leftovers

# timing: its verdict compares a measured latency effect with the configured delay; run
# alone (make test runs these after the rest, one at a time).
pytestmark = [pytest.mark.integration, pytest.mark.timing]

LAB = "itseq"
SPEC = """\
name: itseq
lab: {nodes: 1, profile: container}
workload: {name: ycsb-c, records: 300, options: {in-flight: 1}}
factors:
  - {name: network.client.delay_ms, levels: [0, 2]}
  - {name: option.timeout, levels: [10s, 12s]}
design:
  order: interleaved
  trials: {min: 3, max: 30}
  until: verdicts
  budget: 8m
  detect: 50%
  lab_warmup_trials: 1
stop: {ops: 200, timeout_s: 60}
metrics: {interval_s: 1, cql: false}
analysis: {responses: [read.p50_ms]}
reference:
  findings:
    - {claim: 2 ms each way adds 4 to 6 ms per read, response: read.p50_ms,
       factor: network.client.delay_ms, from: 0, to: 2, expect: slope, slope: 2.4,
       tolerance: 0.6}
    - {claim: the request timeout changes nothing, response: read.p50_ms,
       factor: option.timeout, from: 10s, to: 12s, expect: no difference,
       where: {network.client.delay_ms: [0]}}
"""


def test_campaign_stops_by_itself_when_both_findings_are_decisive(tmp_path: Path) -> None:
    spec = parse_spec(SPEC, source="itseq")
    results = tmp_path / "results"
    events: list[Event] = []
    try:
        outcome = CampaignRunner(spec, results, home=default_home(), cache=default_cache(),
                                 lab_name=LAB, on_event=events.append,
                                 should_stop=until_verdicts(spec, results)).run()
    finally:
        assert not leftovers(LAB)
    assert outcome.failed == 0
    store, res = Results.open(results)
    with store:
        kept = res.kept_trials()
        run_state = res.run_state()
    rounds = max(t.round or 0 for t in kept)
    # the runner's own word on why it ended, which the report reads
    assert run_state == f"stopped: {outcome.stopped_by}"
    delay, aa = round_verdicts(spec, results, rounds)
    # a campaign that ran to its maximum names the finding that stayed undecided
    assert outcome.stopped_by == BY_VERDICTS, (
        f"{outcome.stop_line}; {verdict_line(delay)}; {verdict_line(aa)}")
    assert 3 <= rounds < 30 and len(kept) == 4 * rounds
    assert any(e.kind == "round" for e in events)
    # the delay: ms of median read latency per ms of one-way delay, decided, and
    # between the configured round trip (2) and 1.5 times it. Measured: 2.06 on a quiet
    # fast machine (2026-11-27), 2.143 [2.097, 2.198] on another (2026-11-29, 28
    # rounds), 2.18-2.32 with two campaigns beside it, 2.565 [2.244, 2.885] on the 3x
    # slower machine of 2026-11-28: each delayed packet's trip through the userspace
    # queue costs more on a slower or busier machine, so the excess is the machine's.
    # The band is wide on purpose: an interval that straddles a band's edge never
    # decides, and the former band (2 +- 0.2) had its edge where a quiet fast machine
    # measures: the run of 2026-11-29 above was "inconclusive" for that reason until
    # round 28, and that day's CI ran all 30 rounds undecided (its output did not say
    # which finding; the assertion above now does).
    assert delay.verdict == "holds", verdict_line(delay)
    assert 1.8 <= delay.effect.low <= delay.effect.high <= 3.0, verdict_line(delay)
    # the A/A pair: smaller than this lab can detect, within the declared +-50 %. A
    # median of 200 reads varies: on 2026-11-28 the pair was -1.4 % [-17.6, +17.0] after
    # 20 rounds and never within +-10 % in 30; another run, +6.3 % [-26.4, +53.4] after
    # 12 and within +-30 % only at round 28. Without `detect` the bound is what all 30
    # planned rounds detect, which the interval reaches only near round 30.
    assert aa.verdict == "smaller than this lab can detect", verdict_line(aa)
    assert aa.label.endswith("(+-50.0 %, declared)"), verdict_line(aa)
