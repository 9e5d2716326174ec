#!/usr/bin/env bash
# A single-node Apache Kafka 4.x broker (KRaft, broker and controller in one JVM)
# for tests and CI, run from the official jars on Maven Central.
#
#   scripts/kafka.sh fetch    resolve the jars once into the cache (infra/kafka/pom.xml)
#   scripts/kafka.sh start    format the log dir if new, start on a free loopback port,
#                             wait until the broker answers, print host:port
#   scripts/kafka.sh stop     stop it (SIGTERM: a controlled shutdown) and wait
#   scripts/kafka.sh status   print host:port and exit 0 when it is running
#   scripts/kafka.sh brokers  print host:port of the running broker
#
# Environment:
#   KAFKA_CACHE_DIR        jars (default <repo>/.cache/kafka)
#   KAFKA_RUN_DIR          log dir, pid, ports, broker.log (default $KAFKA_CACHE_DIR/run)
#   KAFKA_PORT             client (PLAINTEXT) port instead of a free one
#   KAFKA_CONTROLLER_PORT  KRaft controller port instead of a free one (a firewall or a
#                          second broker on the machine may need it fixed)
#   KAFKA_HEAP_OPTS        JVM heap flags (default -Xms256m -Xmx512m)
#   KAFKA_START_TIMEOUT    seconds to wait for the broker to answer (default 90)
# A restart with the same KAFKA_RUN_DIR keeps its ports (unless KAFKA_PORT or
# KAFKA_CONTROLLER_PORT say otherwise) and its data, so clients reconnect to the
# same address.
#
# Modelled on Kafka's bin/kafka-server-start.sh, kafka-run-class.sh and
# kafka-storage.sh: the same main classes (kafka.Kafka, kafka.tools.StorageTool)
# and JVM flags, without the distribution tarball.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
POM_DIR="$ROOT/infra/kafka"
CACHE_DIR="${KAFKA_CACHE_DIR:-$ROOT/.cache/kafka}"
RUN_DIR="${KAFKA_RUN_DIR:-$CACHE_DIR/run}"
VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM_DIR/pom.xml")"
LIBS="$CACHE_DIR/libs-$VERSION"
HOST=127.0.0.1

log() { echo "kafka.sh: $*" >&2; }

fetch() {
  if [[ -f "$LIBS/.complete" ]]; then return 0; fi
  command -v mvn >/dev/null || { log "mvn not found: install Maven (and Java 17)"; exit 1; }
  log "resolving Apache Kafka $VERSION from Maven Central into $LIBS"
  rm -rf "$LIBS.tmp"
  mvn -q -B -f "$POM_DIR/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$LIBS.tmp" >&2
  rm -rf "$LIBS" && mv "$LIBS.tmp" "$LIBS" && touch "$LIBS/.complete"
}

java_cmd() {
  # The flags of kafka-run-class.sh (G1, short pauses), a smaller heap than its 1G.
  # shellcheck disable=SC2206
  JAVA_CMD=(java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$POM_DIR/log4j2.properties"
    -cp "$LIBS/*")
}

# N free loopback ports, distinct: every socket stays open until all are bound (two calls
# one after the other can both get the port the first one just closed).
free_ports() {
  node -e "
    const net = require('net');
    const servers = Array.from({ length: $1 }, () => net.createServer());
    Promise.all(servers.map((s) => new Promise((ok) => s.listen(0, '$HOST', ok)))).then(() => {
      console.log(servers.map((s) => s.address().port).join(' '));
      servers.forEach((s) => s.close());
    });"
}

running() {
  [[ -f "$RUN_DIR/pid" ]] && kill -0 "$(cat "$RUN_DIR/pid")" 2>/dev/null
}

answers() {
  (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

write_config() {
  local port=$1 controller_port=$2
  cat >"$RUN_DIR/server.properties" <<PROPS
# Written by scripts/kafka.sh (compare Kafka's config/server.properties).
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$controller_port
listeners=PLAINTEXT://$HOST:$port,CONTROLLER://$HOST:$controller_port
advertised.listeners=PLAINTEXT://$HOST:$port
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$RUN_DIR/data
num.partitions=1
# Topics are created by the clients (the bus adapter), never by a fetch.
auto.create.topics.enable=false
# The largest record batch the broker takes (Kafka's default, said here because the
# services depend on it): their BUS_MAX_MESSAGE_BYTES (default 1000000) must stay at
# or below it and below any topic's max.message.bytes. The services cut outbox
# batches and ingest's chunk events to fit (docs/operations.md, "Event size limits").
message.max.bytes=1048588
# One node: every internal topic has one replica, and few partitions to start fast.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# Tests join groups and expect the first rebalance at once.
group.initial.rebalance.delay.ms=0
log.retention.hours=24
PROPS
}

start() {
  fetch
  if running; then
    echo "$HOST:$(cat "$RUN_DIR/port")"
    return 0
  fi
  mkdir -p "$RUN_DIR"
  local port controller_port
  if [[ -f "$RUN_DIR/port" && -f "$RUN_DIR/controller-port" ]]; then
    port=${KAFKA_PORT:-$(cat "$RUN_DIR/port")}
    controller_port=${KAFKA_CONTROLLER_PORT:-$(cat "$RUN_DIR/controller-port")}
  else
    local ports
    read -r -a ports <<<"$(free_ports 3)"
    # A third free port in hand so that a fixed port never equals a picked one.
    port=${KAFKA_PORT:-${ports[0]}}
    controller_port=${KAFKA_CONTROLLER_PORT:-${ports[1]}}
    if [[ -z "${KAFKA_CONTROLLER_PORT:-}" && "$controller_port" == "$port" ]]; then controller_port=${ports[2]}; fi
    if [[ -z "${KAFKA_PORT:-}" && "$port" == "$controller_port" ]]; then port=${ports[2]}; fi
  fi
  if [[ "$port" == "$controller_port" ]]; then
    log "KAFKA_PORT and KAFKA_CONTROLLER_PORT must differ (both $port)"
    exit 2
  fi
  echo "$port" >"$RUN_DIR/port"
  echo "$controller_port" >"$RUN_DIR/controller-port"
  write_config "$port" "$controller_port"
  if [[ ! -f "$RUN_DIR/data/meta.properties" ]]; then
    local cluster_id
    cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
    java_cmd
    # --cluster-id=<id>, not "-t <id>": a random id may start with '-' (base64url), which the
    # argument parser would take for an option.
    "${JAVA_CMD[@]}" kafka.tools.StorageTool format --ignore-formatted --cluster-id="$cluster_id" \
      -c "$RUN_DIR/server.properties" >>"$RUN_DIR/broker.log" 2>&1 \
      || { log "formatting the log dir failed:"; tail -20 "$RUN_DIR/broker.log" >&2; exit 1; }
  fi
  : >"$RUN_DIR/broker.log.start"
  java_cmd
  nohup "${JAVA_CMD[@]}" kafka.Kafka "$RUN_DIR/server.properties" >"$RUN_DIR/broker.log.start" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/pid"
  local deadline=$((SECONDS + ${KAFKA_START_TIMEOUT:-90}))
  until grep -q 'Kafka Server started' "$RUN_DIR/broker.log.start" 2>/dev/null && answers "$port"; do
    if ! running; then
      log "the broker exited while starting:"
      tail -30 "$RUN_DIR/broker.log.start" >&2
      rm -f "$RUN_DIR/pid"
      exit 1
    fi
    if ((SECONDS > deadline)); then
      log "the broker did not answer on $HOST:$port within ${KAFKA_START_TIMEOUT:-90}s:"
      tail -30 "$RUN_DIR/broker.log.start" >&2
      stop
      exit 1
    fi
    sleep 0.2
  done
  cat "$RUN_DIR/broker.log.start" >>"$RUN_DIR/broker.log"
  echo "$HOST:$port"
}

stop() {
  if ! running; then
    rm -f "$RUN_DIR/pid"
    return 0
  fi
  local pid
  pid=$(cat "$RUN_DIR/pid")
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS > deadline)); then
      log "broker $pid did not stop within 30s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    sleep 0.2
  done
  rm -f "$RUN_DIR/pid"
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status | brokers)
    if running; then echo "$HOST:$(cat "$RUN_DIR/port")"; else
      log "not running ($RUN_DIR)"
      exit 1
    fi
    ;;
  *)
    echo "usage: $0 fetch|start|stop|status|brokers" >&2
    exit 2
    ;;
esac
