#!/usr/bin/env bash
# A campaign against a target on another host runs this machine out of ports to connect from,
# and wireprobe waits for one instead of losing the run. HTTP + SSE runs close their own
# connections, so each leaves its local port in TIME_WAIT for a minute; loopback reuses such
# ports at once, so only a target off loopback shows it. This script puts the HPD reference in
# a network namespace of its own behind a veth pair (a "remote" target), narrows the ephemeral
# port range to PORTS so that the range runs out within seconds, fuzzes, and prints how many
# runs could not complete (0 is the figure), then puts everything back.
# Needs root and iproute2 (it changes net.ipv4.ip_local_port_range while it runs).
# Usage: scripts/local-ports.sh [RUNS] [PORTS] [BINARY]   (default 4000 runs, 2000 ports,
#        ./target/release/wireprobe)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-4000}" ports="${2:-2000}" binary="${3:-./target/release/wireprobe}"
[ "$(id -u)" -eq 0 ] || { echo "needs root (a network namespace, and the port range)" >&2; exit 1; }
command -v ip >/dev/null || { echo "needs iproute2 (apt-get install iproute2)" >&2; exit 1; }
[ -x "$binary" ] || cargo build --release --quiet --bin wireprobe

ns="wireprobe-ports-$$" range_file=/proc/sys/net/ipv4/ip_local_port_range
saved_range=$(cat "$range_file")
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  echo "$saved_range" >"$range_file"
  ip link del "wp$$a" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT

ip netns add "$ns"
ip link add "wp$$a" type veth peer name "wp$$b"
ip link set "wp$$b" netns "$ns"
ip addr add 10.231.0.1/24 dev "wp$$a"
ip link set "wp$$a" up
ip netns exec "$ns" ip addr add 10.231.0.2/24 dev "wp$$b"
ip netns exec "$ns" ip link set "wp$$b" up
ip netns exec "$ns" ip link set lo up

ip netns exec "$ns" "$binary" serve hpd --listen 10.231.0.2:8088 >/dev/null 2>&1 &
server_pid=$!
for _ in $(seq 50); do
  (exec 3<>/dev/tcp/10.231.0.2/8088) 2>/dev/null && break
  sleep 0.1
done

echo "32768 $((32768 + ports - 1))" >"$range_file"
status=0
"$binary" fuzz hpd --target http://10.231.0.2:8088/ --runs "$runs" --seed 1 --jobs 32 \
  --max-len 50 2>&1 | grep -E "runs could not complete|the last run|nothing found|finding" || status=$?
echo "connections of ours waiting out TIME_WAIT: $(ss -tan state time-wait | tail -n +2 | wc -l) (the range holds $ports)"
exit "$status"
