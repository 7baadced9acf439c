#!/usr/bin/env bash
# Starts Strata in the background and returns once it serves.
#   strata-start.sh local [--workers N]        master + N workers (default 1) in one JVM
#   strata-start.sh master                     a master process
#   strata-start.sh worker [--port P] [--dir D] [--quota Q]
#                                              a worker process (several per host: different ports/dirs)
#   strata-start.sh all                        a master here, then a worker per line of $STRATA_CONF_DIR/workers
#                                              (host[:rpcPort]; localhost: a process here, else over ssh)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/strata-env.sh"

usage() {
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

[ $# -ge 1 ] || usage
what=$1; shift
case "${STRATA_START_TIMEOUT:-120}" in
  ''|*[!0-9]*)
    echo "STRATA_START_TIMEOUT must be a whole number of seconds, not '${STRATA_START_TIMEOUT}'." >&2
    exit 2 ;;
esac
mkdir -p "$STRATA_LOGS_DIR" "$STRATA_PID_DIR"

# $1 pid file, $2 log name, $3 readiness check command; rest: java args
launch() {
  local pidfile=$1 name=$2 ready=$3; shift 3
  if strata_pid_alive "$pidfile"; then
    echo "$name is already running as process $(cat "$pidfile"); stop it first (bin/strata-stop.sh)." >&2
    exit 1
  fi
  strata_ensure_built
  local out="$STRATA_LOGS_DIR/$name.out"
  # A fresh log per start, so readiness checks never match an earlier run's lines.
  [ -f "$STRATA_LOGS_DIR/$name.log" ] && mv -f "$STRATA_LOGS_DIR/$name.log" "$STRATA_LOGS_DIR/$name.log.prev"
  strata_server_props "$name"
  # shellcheck disable=SC2086
  nohup "$JAVA" -Xmx${STRATA_HEAP:-2g} -XX:+UseG1GC ${STRATA_JAVA_OPTS:-} -cp "$(strata_classpath)" \
    "${STRATA_SERVER_PROPS[@]}" "$@" >"$out" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pidfile"
  local waited=0
  while ! eval "$ready"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pidfile"
      local code=0
      wait "$pid" || code=$?
      if grep -q '^Cannot start the ' "$out"; then
        # The process said why in one line (a bad setting, a taken port, a journal in use): that is all.
        grep '^Cannot start the ' "$out" >&2
      else
        echo "$name failed to start (exit code $code). Last lines of its logs:" >&2
        tail -n 20 "$out" >&2 || true
        tail -n 20 "$STRATA_LOGS_DIR/$name.log" 2>/dev/null >&2 || true
      fi
      exit 1
    fi
    if [ "$waited" -ge "${STRATA_START_TIMEOUT:-120}0" ]; then
      echo "$name (pid $pid) did not become ready within ${STRATA_START_TIMEOUT:-120}s. Last log lines:" >&2
      tail -n 20 "$STRATA_LOGS_DIR/$name.log" 2>/dev/null >&2 || tail -n 20 "$out" >&2 || true
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  grep '^Warning: ' "$out" >&2 || true
  echo "Started $name (pid $pid); logs in $STRATA_LOGS_DIR/$name.log"
}

case "$what" in
  local)
    workers=1
    while [ $# -gt 0 ]; do
      case "$1" in
        --workers) workers=${2:?--workers needs a number}; shift 2 ;;
        --workers=*) workers=${1#--workers=}; shift ;;
        *) echo "strata-start.sh local: unknown option $1" >&2; usage ;;
      esac
    done
    case "$workers" in ''|*[!0-9]*) echo "--workers must be a number, got '$workers'" >&2; exit 2 ;; esac
    rm -f "$STRATA_DATA_DIR/local.ready"
    launch "$STRATA_PID_DIR/local.pid" local "[ -f '$STRATA_DATA_DIR/local.ready' ]" \
      io.strata.minicluster.LocalMain --workers "$workers"
    echo "Strata local cluster: master localhost:${STRATA_MASTER_RPC_PORT:-19998}, $workers worker(s)." \
      "Try: bin/strata fs ls /"
    ;;
  master)
    [ $# -eq 0 ] || { echo "strata-start.sh master takes no options (configure it in conf/)" >&2; usage; }
    # Ready when THIS master says it serves: an open port may be another master's (or local mode's).
    launch "$STRATA_PID_DIR/master.pid" master \
      "grep -q ' serving on ' '$STRATA_LOGS_DIR/master.log' 2>/dev/null" io.strata.master.MasterMain
    ;;
  worker)
    port=${STRATA_WORKER_RPC_PORT:-29999}
    props=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --port) port=${2:?--port needs a number}; shift 2 ;;
        --dir) props+=("-Dstrata.worker.tier.0.dirs=${2:?--dir needs a path}"); shift 2 ;;
        --quota) props+=("-Dstrata.worker.tier.0.quota=${2:?--quota needs a size}"); shift 2 ;;
        *) echo "strata-start.sh worker: unknown option $1" >&2; usage ;;
      esac
    done
    case "$port" in ''|*[!0-9]*) echo "--port must be a number, got '$port'" >&2; exit 2 ;; esac
    name="worker-$port"
    launch "$STRATA_PID_DIR/$name.pid" "$name" \
      "grep -q 'Registered with the master' '$STRATA_LOGS_DIR/$name.log' 2>/dev/null" \
      "-Dstrata.worker.rpc.port=$port" "${props[@]}" io.strata.worker.WorkerMain
    ;;
  all)
    [ $# -eq 0 ] || { echo "strata-start.sh all takes no options (list the workers in $STRATA_CONF_DIR/workers)" >&2; usage; }
    list="$STRATA_CONF_DIR/workers"
    [ -f "$list" ] || { echo "strata-start.sh all: no $list (one host[:rpcPort] per line)" >&2; exit 2; }
    "$0" master
    failed=0
    while IFS= read -r line || [ -n "$line" ]; do
      line=${line%%#*}; line=$(echo "$line" | tr -d '[:space:]')
      [ -n "$line" ] || continue
      host=${line%%:*}; wport=29999
      [ "$host" != "$line" ] && wport=${line#*:}
      case "$wport" in ''|*[!0-9]*) echo "strata-start.sh all: bad line '$line' in $list (host[:rpcPort])" >&2; failed=1; continue ;; esac
      case "$host" in
        localhost|127.0.0.1) "$0" worker --port "$wport" || failed=1 ;;
        *) ssh -o BatchMode=yes "$host" "cd '$STRATA_HOME' && bin/strata-start.sh worker --port $wport" </dev/null || failed=1 ;;
      esac
    done <"$list"
    exit "$failed"
    ;;
  -h|--help) usage ;;
  *) echo "strata-start.sh: unknown target '$what'" >&2; usage ;;
esac
