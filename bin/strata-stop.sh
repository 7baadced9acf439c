#!/usr/bin/env bash
# Stops Strata processes started by strata-start.sh.
#   strata-stop.sh [local|master|worker|all]     (default: all; all also stops the workers that
#                                                $STRATA_CONF_DIR/workers lists on other hosts, over ssh)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/strata-env.sh"

what=${1:-all}

stop_pidfile() {
  local pidfile=$1 name
  name=$(basename "$pidfile" .pid)
  if ! strata_pid_alive "$pidfile"; then
    rm -f "$pidfile"
    return 1
  fi
  local pid
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$name (pid $pid) did not stop within 15s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  echo "Stopped $name (pid $pid)"
}

stopped=0
stop_matching() {
  local f
  for f in "$STRATA_PID_DIR"/$1.pid; do
    [ -e "$f" ] || continue
    if stop_pidfile "$f"; then stopped=$((stopped + 1)); fi
  done
}

case "$what" in
  local) stop_matching local ;;
  master) stop_matching master ;;
  worker) stop_matching 'worker-*' ;;
  all)
    stop_matching local; stop_matching 'worker-*'
    if [ -f "$STRATA_CONF_DIR/workers" ]; then
      while IFS= read -r line || [ -n "$line" ]; do
        line=${line%%#*}; line=$(echo "$line" | tr -d '[:space:]'); host=${line%%:*}
        case "$host" in
          ''|localhost|127.0.0.1) ;;
          *) ssh -o BatchMode=yes "$host" "cd '$STRATA_HOME' && bin/strata-stop.sh worker" </dev/null \
               && stopped=$((stopped + 1)) ;;
        esac
      done <"$STRATA_CONF_DIR/workers"
    fi
    stop_matching master ;;
  -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "strata-stop.sh: unknown target '$what' (local, master, worker or all)" >&2; exit 2 ;;
esac
if [ "$stopped" -eq 0 ]; then
  if [ "$what" = all ]; then echo "Nothing to stop: no Strata process is running (no live pid file in $STRATA_PID_DIR)."
  else echo "Nothing to stop: no Strata $what process is running (no live pid file in $STRATA_PID_DIR)."; fi
fi
exit 0
