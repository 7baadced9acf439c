#!/usr/bin/env bash
# Shared settings of the bin/ scripts. Sourced, not run.
# STRATA_HOME       install dir (default: the parent of bin/)
# STRATA_CONF_DIR   conf dir with strata-site.properties (default: $STRATA_HOME/conf)
# STRATA_LOGS_DIR   logs (default: $STRATA_HOME/logs); STRATA_DATA_DIR: pid files, state (default: $STRATA_HOME/data)
# STRATA_JAVA_OPTS  extra JVM options; JAVA_HOME selects the JDK
STRATA_HOME=${STRATA_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
export STRATA_HOME
export STRATA_CONF_DIR=${STRATA_CONF_DIR:-$STRATA_HOME/conf}
STRATA_LOGS_DIR=${STRATA_LOGS_DIR:-$STRATA_HOME/logs}
STRATA_DATA_DIR=${STRATA_DATA_DIR:-$STRATA_HOME/data}
STRATA_LIB_DIR=$STRATA_HOME/lib
STRATA_PID_DIR=$STRATA_DATA_DIR/pids
if [ -n "${JAVA_HOME:-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi

strata_classpath() {
  echo "$STRATA_LIB_DIR/*"
}

# What `strata fs` and `strata fsadmin` run with: the jars in lib/ but the servers', Hadoop's and log4j's,
# and slf4j-simple first (log4j's start-up costs a short command a third of its time). The order is the
# glob's, so it is the same at every run: the class-data archive below only serves the classpath it was made for.
strata_cli_classpath() {
  local cp="$STRATA_LIB_DIR/cli/slf4j-simple.jar" f
  for f in "$STRATA_LIB_DIR"/*.jar; do
    case "${f##*/}" in
      log4j-*|hadoop-*|strata-server-*|strata-tests-*|commons-logging-*) ;;
      *) cp="$cp:$f" ;;
    esac
  done
  echo "$cp"
}

# The CLI's class-data sharing archive (AppCDS), made at package time by strata_make_cli_archive: the JVM
# maps the classes a command loads instead of reading and verifying them from the jars.
STRATA_CLI_ARCHIVE=$STRATA_LIB_DIR/cli/strata-cli.jsa

# JVM options of the CLI's short commands: C1 only, the serial collector, the archive when it matches this
# JDK and classpath (the JVM ignores one that does not, and -Xlog keeps that quiet), slf4j-simple at WARN.
strata_cli_java_opts() {
  local opts="-Xss2m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData -XX:+IgnoreUnrecognizedVMOptions -XX:-PrintWarnings -XX:-FlightRecorder -Xlog:cds=off -Xlog:cds+dynamic=off"
  [ -f "$STRATA_CLI_ARCHIVE" ] && opts="$opts -XX:SharedArchiveFile=$STRATA_CLI_ARCHIVE"
  echo "$opts -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.io.netty=error" \
       "-Dorg.slf4j.simpleLogger.log.io.grpc=error -Dorg.slf4j.simpleLogger.showThreadName=false" \
       "-Dorg.slf4j.simpleLogger.showShortLogName=true -Dorg.slf4j.simpleLogger.logFile=System.err"
}

# Makes the CLI's archive (a static AppCDS archive: it also holds picocli's classes, whose Java 5 class files a
# dynamic archive leaves out, and the JDK's own) in two steps: a training run (io.strata.cli.CdsTraining: `fs ls`
# against a stand-in master on a loopback port, so the classes of a successful call are in it, then help and
# every RPC message) lists the classes it loads, and -Xshare:dump archives that list for this JDK and classpath.
strata_make_cli_archive() {
  local opts list="$STRATA_LIB_DIR/cli/strata-cli.classlist"
  rm -f "$STRATA_CLI_ARCHIVE" "$list"
  opts=$(strata_cli_java_opts | sed 's/-XX:SharedArchiveFile=[^ ]*//')
  # shellcheck disable=SC2086
  "$JAVA" $opts -XX:DumpLoadedClassList="$list" -cp "$(strata_cli_classpath)" \
    -Dstrata.conf.dir=/nonexistent -Dstrata.home="$STRATA_HOME" -Dstrata.cli.training=true \
    io.strata.cli.StrataCli fs ls strata://127.0.0.1:1/ >/dev/null 2>&1 || true
  # The list names the JDK's generated proxies too, which the dump cannot find and warns of: expected.
  # shellcheck disable=SC2086
  [ -s "$list" ] && "$JAVA" $opts -Xshare:dump -XX:SharedClassListFile="$list" \
    -XX:SharedArchiveFile="$STRATA_CLI_ARCHIVE" -cp "$(strata_cli_classpath)" >/dev/null 2>&1
  rm -f "$list"
  [ -f "$STRATA_CLI_ARCHIVE" ] || echo "No class-data archive was made for the CLI (it runs without one)." >&2
}

# bench cli: the wall time of `strata fs ls PATH` beside a bare `java -version`, alternating, N runs each;
# prints the medians and their ratio (the machine's noise hits both alike).
strata_bench_cli() {
  local runs=10 path=/
  while [ $# -gt 0 ]; do
    case "$1" in
      --runs) runs=${2:?--runs needs a number}; shift 2 ;;
      -h|--help) echo "Usage: strata bench cli [--runs N] [PATH]: times strata fs ls PATH (default /) and java -version, N runs each (default 10)."; return 0 ;;
      -*) echo "strata bench cli: unknown option $1" >&2; return 2 ;;
      *) path=$1; shift ;;
    esac
  done
  case "$runs" in ''|*[!0-9]*|0) echo "strata bench cli: --runs must be a positive number, got '$runs'" >&2; return 2 ;; esac
  local bin t0 i ls=() jv=()
  bin="$STRATA_HOME/bin/strata"
  "$bin" fs ls "$path" >/dev/null || { echo "strata bench cli: 'strata fs ls $path' failed; is the cluster running?" >&2; return 1; }
  for i in $(seq 1 "$runs"); do
    t0=$(date +%s%N); "$JAVA" -version >/dev/null 2>&1; jv+=($(( $(date +%s%N) - t0 )))
    t0=$(date +%s%N); "$bin" fs ls "$path" >/dev/null; ls+=($(( $(date +%s%N) - t0 )))
  done
  local mls mjv
  mls=$(printf '%s\n' "${ls[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  mjv=$(printf '%s\n' "${jv[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  awk -v l="$mls" -v j="$mjv" -v n="$runs" -v a="$([ -f "$STRATA_CLI_ARCHIVE" ] && echo true || echo false)" 'BEGIN {
    printf "bench cli op=fs-ls runs=%d archive=%s median_s=%.3f baseline=java-version baseline_s=%.3f ratio=%.1f\n",
      n, a, l / 1e9, j / 1e9, l / j }'
}

# What a Hadoop or Spark program needs for strata:// (and the Java client API): the one shaded client jar,
# which bundles everything but Hadoop and slf4j (both programs bring their own).
strata_client_classpath() {
  echo "$STRATA_LIB_DIR/client/strata-client.jar"
}

# What Spark needs on the driver and executors for the shuffle adapter (io.strata.shuffle.StrataShuffleManager):
# the adapter's jar, built against the shaded client's relocated gRPC, protobuf and Netty, and the shaded
# client jar. Spark brings Scala, slf4j and Hadoop.
strata_shuffle_classpath() {
  echo "$STRATA_LIB_DIR/shuffle/strata-shuffle.jar:$(strata_client_classpath)"
}

# bench shuffle: Spark is no part of lib/; the build (tests/shuffle's package) writes the classpath Maven
# resolved for the benchmark (Spark, the adapter, the mini cluster) into lib/bench/shuffle.classpath, paths
# into the Maven repository it built with. Prints the benchmark jar and that classpath, or says what is missing.
strata_bench_shuffle_classpath() {
  local file="$STRATA_LIB_DIR/bench/shuffle.classpath" jar cp e
  jar=$(ls "$STRATA_LIB_DIR"/bench/strata-tests-shuffle-*-bench.jar 2>/dev/null | head -1)
  if [ ! -f "$file" ] || [ -z "$jar" ]; then
    echo "strata bench shuffle: Spark's classpath not found ($file and lib/bench/strata-tests-shuffle-*-bench.jar);" \
      "the build writes them: run 'mvn -DskipTests install' in $STRATA_HOME (Spark is not shipped in lib/)." >&2
    return 1
  fi
  cp=$(cat "$file")
  local IFS=:
  for e in $cp; do
    if [ ! -f "$e" ]; then
      echo "strata bench shuffle: $file names $e, which does not exist (the Maven repository it was built" \
        "with has moved or been cleaned?); run 'mvn -DskipTests install' in $STRATA_HOME again." >&2
      return 1
    fi
  done
  echo "$jar:$cp"
}

# Builds the jars when they are missing (a fresh clone).
strata_ensure_built() {
  if ! ls "$STRATA_LIB_DIR"/strata-tests-*-lib.jar >/dev/null 2>&1 \
     || ! ls "$STRATA_LIB_DIR"/strata-client-cli-*.jar >/dev/null 2>&1 \
     || [ ! -f "$STRATA_LIB_DIR/client/strata-client.jar" ] \
     || [ ! -f "$STRATA_LIB_DIR/shuffle/strata-shuffle.jar" ]; then
    echo "Strata jars not found in $STRATA_LIB_DIR: building (mvn -DskipTests package) ..." >&2
    (cd "$STRATA_HOME" && mvn -B -q -DskipTests package) >&2 || {
      echo "Build failed; run 'mvn -DskipTests package' in $STRATA_HOME to see why." >&2
      exit 1
    }
  fi
}

# Common JVM system properties of server processes, into the array STRATA_SERVER_PROPS: $1 = log name. An array,
# so a STRATA_HOME (or conf, logs, data dir) with spaces in its path stays one argument each.
strata_server_props() {
  STRATA_SERVER_PROPS=("-Dstrata.home=$STRATA_HOME" "-Dstrata.conf.dir=$STRATA_CONF_DIR"
    "-Dstrata.logs.dir=$STRATA_LOGS_DIR" "-Dstrata.data.dir=$STRATA_DATA_DIR" "-Dstrata.log.name=$1"
    "-Dlog4j2.configurationFile=$STRATA_CONF_DIR/log4j2.properties")
}

# Whether the pid file $1 names a live Strata process of that name. A pid file a crashed process left may name a
# pid the system has since given another program: where /proc tells, only a process started with that log name
# counts, so a stop never signals someone else's process.
strata_pid_alive() {
  [ -f "$1" ] || return 1
  local pid
  pid=$(cat "$1")
  case "$pid" in ''|*[!0-9]*) return 1 ;; esac
  kill -0 "$pid" 2>/dev/null || return 1
  if [ -r "/proc/$pid/cmdline" ]; then
    tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "-Dstrata.log.name=$(basename "$1" .pid)"
  fi
}
