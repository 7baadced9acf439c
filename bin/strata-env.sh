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

# What a Hadoop or Spark program needs for strata:// (and the Java client API): the one shaded client jar,
# which bundles everything but Hadoop and slf4j (both programs bring their own).
strata_client_classpath() {
  echo "$STRATA_LIB_DIR/client/strata-client.jar"
}

# Builds the jars when they are missing (a fresh clone).
strata_ensure_built() {
  if ! ls "$STRATA_LIB_DIR"/strata-tests-*-lib.jar >/dev/null 2>&1 \
     || ! ls "$STRATA_LIB_DIR"/strata-client-cli-*.jar >/dev/null 2>&1 \
     || [ ! -f "$STRATA_LIB_DIR/client/strata-client.jar" ]; then
    echo "Strata jars not found in $STRATA_LIB_DIR: building (mvn -DskipTests package) ..." >&2
    (cd "$STRATA_HOME" && mvn -B -q -DskipTests package) >&2 || {
      echo "Build failed; run 'mvn -DskipTests package' in $STRATA_HOME to see why." >&2
      exit 1
    }
  fi
}

# Common JVM system properties of server processes: $1 = log name.
strata_server_props() {
  echo "-Dstrata.home=$STRATA_HOME -Dstrata.conf.dir=$STRATA_CONF_DIR -Dstrata.logs.dir=$STRATA_LOGS_DIR" \
       "-Dstrata.data.dir=$STRATA_DATA_DIR -Dstrata.log.name=$1" \
       "-Dlog4j2.configurationFile=$STRATA_CONF_DIR/log4j2.properties"
}

strata_pid_alive() {
  [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}
