#!/usr/bin/env bash
# A single-node Elasticsearch (security off, loopback only, small heap) for tests and
# CI, run from the server's jars on Maven Central (no distribution tarball, no Docker).
#
#   scripts/elasticsearch.sh fetch    resolve the jars once (infra/elasticsearch/pom.xml) and
#                                     lay them out as a distribution (lib/, modules/)
#   scripts/elasticsearch.sh start    start on a free loopback port, wait until the cluster
#                                     is green, print http://host:port
#   scripts/elasticsearch.sh stop     stop it (SIGTERM: a clean shutdown) and wait
#   scripts/elasticsearch.sh status   print http://host:port and exit 0 when it is running
#   scripts/elasticsearch.sh url      the same
#
# Environment: ES_CACHE_DIR (jars and the laid-out home; default <repo>/.cache/elasticsearch),
# ES_RUN_DIR (data, logs, config, pid, port, node.log; default $ES_CACHE_DIR/run), ES_PORT
# (fixed HTTP port instead of a free one), ES_HEAP (default 512m), ES_START_TIMEOUT
# (seconds, default 120). A restart with the same ES_RUN_DIR keeps its port and its data.
#
# What the distribution's launcher (server-cli) normally does is done here: the server reads
# its arguments (org.elasticsearch.bootstrap.ServerArgs) from its standard input, written by
# infra/elasticsearch/WriteServerArgs.java, and keeps that input open for as long as it runs
# (it shuts down when it closes); lib/tools/ansi-console is a stand-in that gives no ANSI
# console; the transport-netty4 module gets the plugin descriptor and policy its published
# jar lacks. Only the server core and that module exist on Maven Central (8.16.6): no
# analysis-common (porter_stem, asciifolding), no reindex (_delete_by_query), no painless.
# The search adapter detects what the node has (shared/search/src/elasticsearch).
# Needs Java 17 with javac (a JDK) and Maven.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC_DIR="$ROOT/infra/elasticsearch"
CACHE_DIR="${ES_CACHE_DIR:-$ROOT/.cache/elasticsearch}"
RUN_DIR="${ES_RUN_DIR:-$CACHE_DIR/run}"
VERSION="$(sed -n 's:.*<elasticsearch.version>\(.*\)</elasticsearch.version>.*:\1:p' "$SRC_DIR/pom.xml")"
ES_HOME="$CACHE_DIR/home-$VERSION"
HOST=127.0.0.1

log() { echo "elasticsearch.sh: $*" >&2; }

fetch() {
  if [[ -f "$ES_HOME/.complete" ]]; then return 0; fi
  command -v mvn >/dev/null || { log "mvn not found: install Maven (and a Java 17 JDK)"; exit 1; }
  command -v javac >/dev/null || { log "javac not found: install a Java 17 JDK (openjdk-17-jdk-headless)"; exit 1; }
  log "resolving Elasticsearch $VERSION from Maven Central into $ES_HOME"
  local tmp="$ES_HOME.tmp"
  rm -rf "$tmp"
  mkdir -p "$tmp/jars" "$tmp/bin" "$tmp/plugins" "$tmp/lib/tools/ansi-console" "$tmp/modules/transport-netty4" "$tmp/launcher"
  mvn -q -B -f "$SRC_DIR/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$tmp/jars" >&2
  local jar
  for jar in "$tmp"/jars/*.jar; do
    case "$(basename "$jar")" in
      transport-netty4-* | netty-*) mv "$jar" "$tmp/modules/transport-netty4/" ;;
      *) mv "$jar" "$tmp/lib/" ;;
    esac
  done
  rmdir "$tmp/jars"
  sed "s/@VERSION@/$VERSION/g" "$SRC_DIR/transport-netty4.properties" >"$tmp/modules/transport-netty4/plugin-descriptor.properties"
  cp "$SRC_DIR/transport-netty4.policy" "$tmp/modules/transport-netty4/plugin-security.policy"
  javac -d "$tmp/launcher" -cp "$tmp/lib/*" "$SRC_DIR/WriteServerArgs.java" >&2
  mkdir -p "$tmp/ansi"
  javac -d "$tmp/ansi" "$SRC_DIR/AnsiConsoleLoader.java" >&2
  (cd "$tmp/ansi" && jar cf "$tmp/lib/tools/ansi-console/ansi-console-stand-in.jar" .)
  rm -rf "$tmp/ansi"
  touch "$tmp/.complete"
  rm -rf "$ES_HOME" && mv "$tmp" "$ES_HOME"
}

running() {
  [[ -f "$RUN_DIR/pid" ]] && kill -0 "$(cat "$RUN_DIR/pid")" 2>/dev/null
}

url() { echo "http://$HOST:$(cat "$RUN_DIR/port")"; }

# N free loopback ports, distinct (every socket stays open until all are bound).
free_ports() {
  node -e "
    const net = require('net');
    const servers = Array.from({ length: $1 }, () => net.createServer());
    Promise.all(servers.map((s) => new Promise((ok) => s.listen(0, '$HOST', ok)))).then(() => {
      console.log(servers.map((s) => s.address().port).join(' '));
      servers.forEach((s) => s.close());
    });"
}

green() {
  curl -fsS -m 5 "http://$HOST:$1/_cluster/health?wait_for_status=green&timeout=1s" 2>/dev/null | grep -q '"status":"green"'
}

start() {
  fetch
  if running; then
    url
    return 0
  fi
  mkdir -p "$RUN_DIR/config" "$RUN_DIR/data" "$RUN_DIR/logs" "$RUN_DIR/tmp"
  local port transport_port
  if [[ -f "$RUN_DIR/port" && -f "$RUN_DIR/transport-port" ]]; then
    port=$(cat "$RUN_DIR/port")
    transport_port=$(cat "$RUN_DIR/transport-port")
  else
    local ports
    read -r -a ports <<<"$(free_ports 3)"
    port=${ES_PORT:-${ports[0]}}
    transport_port=${ports[1]}
    [[ "$transport_port" == "$port" ]] && transport_port=${ports[2]}
    echo "$port" >"$RUN_DIR/port"
    echo "$transport_port" >"$RUN_DIR/transport-port"
  fi
  local heap="${ES_HEAP:-512m}" as_user=() home="$ES_HOME"
  if [[ "$(id -u)" == 0 ]]; then
    # "can not run elasticsearch as root": the node runs as nobody, in a run dir it owns.
    as_user=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --)
    chown -R nobody "$RUN_DIR"
    if ! "${as_user[@]}" test -r "$ES_HOME/lib/elasticsearch-$VERSION.jar"; then
      # The cache is not readable by nobody (a private home folder): a copy beside the data.
      rm -rf "$RUN_DIR/home" && cp -a "$ES_HOME" "$RUN_DIR/home" && chown -R nobody "$RUN_DIR/home"
      home="$RUN_DIR/home"
    fi
    "${as_user[@]}" test -w "$RUN_DIR/data" || {
      log "nobody cannot write $RUN_DIR/data (is a parent folder private?); set ES_RUN_DIR to a folder under /tmp"
      exit 1
    }
  fi
  cp "$SRC_DIR/log4j2.properties" "$RUN_DIR/config/log4j2.properties"
  : >"$RUN_DIR/config/elasticsearch.yml"
  java -cp "$ES_HOME/lib/*:$ES_HOME/launcher" WriteServerArgs "$RUN_DIR/server-args.bin" \
    "$RUN_DIR/config" "$RUN_DIR/logs" "$RUN_DIR/node.pid" \
    "path.home=$home" "path.data=$RUN_DIR/data" "path.logs=$RUN_DIR/logs" \
    cluster.name=kb-test node.name=kb-test discovery.type=single-node \
    "network.host=$HOST" "http.port=$port" "transport.port=$transport_port" \
    cluster.routing.allocation.disk.threshold_enabled=false \
    action.auto_create_index=false
  # The server's standard input: its arguments, then held open (it shuts down at end of input).
  rm -f "$RUN_DIR/stdin"
  mkfifo "$RUN_DIR/stdin"
  nohup sh -c 'cat "$1"; exec sleep 2147483647' sh "$RUN_DIR/server-args.bin" >"$RUN_DIR/stdin" 2>/dev/null </dev/null &
  echo $! >"$RUN_DIR/stdin-pid"
  # The flags of the distribution's jvm.options that matter here, with a small heap.
  ES_TMPDIR="$RUN_DIR/tmp" LIBFFI_TMPDIR="$RUN_DIR/tmp" nohup "${as_user[@]}" java "-Xms$heap" "-Xmx$heap" \
    -XX:+UseG1GC -Xss1m -XX:-OmitStackTraceInFastThrow \
    -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djna.nosys=true -Dio.netty.noUnsafe=true \
    -Dio.netty.noKeySetOptimization=true -Dio.netty.recycler.maxCapacityPerThread=0 \
    -Dlog4j.shutdownHookEnabled=false -Dlog4j2.disable.jmx=true -Dlog4j2.formatMsgNoLookups=true \
    -Djava.locale.providers=SPI,COMPAT -Djava.security.manager=allow \
    "-Djava.io.tmpdir=$RUN_DIR/tmp" "-Des.path.home=$home" "-Des.path.conf=$RUN_DIR/config" \
    -Des.distribution.type=tar -XX:+ExitOnOutOfMemoryError \
    --module-path "$home/lib" --add-modules=ALL-MODULE-PATH,jdk.net -m org.elasticsearch.server/org.elasticsearch.bootstrap.Elasticsearch \
    <"$RUN_DIR/stdin" >"$RUN_DIR/node.log" 2>&1 &
  echo $! >"$RUN_DIR/pid"
  local deadline=$((SECONDS + ${ES_START_TIMEOUT:-120}))
  until green "$port"; do
    if ! running; then
      log "the node exited while starting:"
      tail -40 "$RUN_DIR/node.log" >&2
      stop
      exit 1
    fi
    if ((SECONDS > deadline)); then
      log "the node was not green on $HOST:$port within ${ES_START_TIMEOUT:-120}s:"
      tail -40 "$RUN_DIR/node.log" >&2
      stop
      exit 1
    fi
    sleep 0.5
  done
  url
}

stop() {
  local pid
  if running; then
    pid=$(cat "$RUN_DIR/pid")
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null; do
      if ((SECONDS > deadline)); then
        log "node $pid did not stop within 30s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
      fi
      sleep 0.2
    done
  fi
  if [[ -f "$RUN_DIR/stdin-pid" ]]; then
    kill -TERM "$(cat "$RUN_DIR/stdin-pid")" 2>/dev/null || true
  fi
  rm -f "$RUN_DIR/pid" "$RUN_DIR/stdin-pid" "$RUN_DIR/stdin"
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status | url)
    if running; then url; else
      log "not running ($RUN_DIR)"
      exit 1
    fi
    ;;
  *)
    echo "usage: $0 fetch|start|stop|status|url" >&2
    exit 2
    ;;
esac
