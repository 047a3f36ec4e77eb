#!/usr/bin/env bash
# Starts (or stops) a local 3-master Redis Cluster for the tests, on
# 127.0.0.1 ports $REDIS_CLUSTER_PORT..+2 (default 7001-7003; the cluster
# bus of each node is its port + 10000). Idempotent: "start" on a cluster
# that already answers cluster_state:ok does nothing. Prints the URL the
# tests take as REDIS_CLUSTER_URL on its last line.
#
#   .ci/redis-cluster.sh start   # start, create the cluster, wait for ok
#   .ci/redis-cluster.sh stop    # shut the three nodes down, remove their files
#   .ci/redis-cluster.sh url     # print the URL only
set -euo pipefail

base=${REDIS_CLUSTER_PORT:-7001}
dir=${REDIS_CLUSTER_DIR:-${TMPDIR:-/tmp}/twostep-redis-cluster-$base}
ports=("$base" "$((base + 1))" "$((base + 2))")

url() {
  printf 'redis://127.0.0.1:%s?addr=127.0.0.1:%s&addr=127.0.0.1:%s\n' "${ports[@]}"
}

state_ok() { # every node answers and reports cluster_state:ok
  for p in "${ports[@]}"; do
    redis-cli -h 127.0.0.1 -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
  done
}

start() {
  if state_ok; then url; return; fi
  # Nodes left half up by an earlier run cannot be joined again: start over.
  for p in "${ports[@]}"; do
    if redis-cli -h 127.0.0.1 -p "$p" ping >/dev/null 2>&1; then stop; break; fi
  done
  mkdir -p "$dir"
  for p in "${ports[@]}"; do
    if ! redis-cli -h 127.0.0.1 -p "$p" ping >/dev/null 2>&1; then
      rm -f "$dir/nodes-$p.conf"
      redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file "$dir/nodes-$p.conf" --cluster-node-timeout 2000 \
        --save '' --appendonly no --daemonize yes --dir "$dir" \
        --logfile "$dir/redis-$p.log" --pidfile "$dir/redis-$p.pid"
    fi
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 1 100); do redis-cli -h 127.0.0.1 -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
  done
  # A node that already knows other nodes belongs to a cluster in progress:
  # only a fresh set of nodes is joined here.
  if [ "$(redis-cli -h 127.0.0.1 -p "$base" cluster info | tr -d '\r' | sed -n 's/^cluster_known_nodes://p')" = 1 ]; then
    redis-cli --cluster create "127.0.0.1:${ports[0]}" "127.0.0.1:${ports[1]}" "127.0.0.1:${ports[2]}" \
      --cluster-replicas 0 --cluster-yes >/dev/null
  fi
  for _ in $(seq 1 200); do
    if state_ok; then url; return; fi
    sleep 0.1
  done
  echo "redis cluster on ports ${ports[*]} never reached cluster_state:ok" >&2
  exit 1
}

stop() {
  for p in "${ports[@]}"; do
    redis-cli -h 127.0.0.1 -p "$p" shutdown nosave >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
