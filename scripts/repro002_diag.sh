#!/bin/bash
# Seed 002, why the lab's RTTs differ from the paper's: one lab with the study's base
# delays (x = y = z = 10 ms; a, b, c = 5, 10, 15 ms), then
#   1. casslab net check: the emulated links' measured RTT against the configured one;
#   2. at CL 1, 2, 3: casslab-load (ycsb-a, one request in flight, as the campaign) and
#      the study's own client (DataStax Python driver, unprepared statements, one request
#      at a time: scripts/repro002_pyclient.py) back to back;
#   3. the same with no delays at all (the clients' and Cassandra's own time).
# Output: one log (stdout). Usage: scripts/repro002_diag.sh > diag.log 2>&1
set -u
cd "$(dirname "$0")/.." || exit 2
CASSLAB=${CASSLAB:-.venv/bin/casslab}
PY=${PY:-.venv/bin/python}
NAME=${NAME:-r002diag}
N=${N:-300}
trap '$CASSLAB lab down --name $NAME' EXIT
$CASSLAB lab up --nodes 3 --name "$NAME" || exit 1
$CASSLAB run ycsb-a --name "$NAME" --phase load --records 1000 --rf 3 >/dev/null || exit 1
for delays in on off; do
  if [ "$delays" = on ]; then
    $CASSLAB net set --name "$NAME" --client-delay 10ms --node-delay 5ms,10ms,15ms
  else
    $CASSLAB net clear --name "$NAME"
  fi
  echo "=== delays $delays $(date +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
  [ "$delays" = on ] && $CASSLAB net check --name "$NAME" --pings 100 --loss-packets 0 \
    --no-bandwidth
  for cl in ONE TWO THREE; do
    echo "--- casslab-load CL $cl"
    $CASSLAB run ycsb-a --name "$NAME" --records 1000 --ops $((2 * N)) --warmup 50 \
      --in-flight 1 --cl-read $cl --cl-write $cl
    echo "--- python driver CL $cl"
    $CASSLAB lab exec --name "$NAME" -- "$PY" scripts/repro002_pyclient.py --cl $cl --n "$N"
  done
done
echo "=== done $(date +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)"
