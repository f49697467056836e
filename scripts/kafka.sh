#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft) on 127.0.0.1 for tests and benchmarks.
#
#   scripts/kafka.sh start    start it (idempotent); prints KAFKA_BOOTSTRAP=127.0.0.1:PORT
#   scripts/kafka.sh stop     stop it, keep its data (a later start reuses ports and data)
#   scripts/kafka.sh clean    stop it and delete its data and ports
#   scripts/kafka.sh sasl     print its SASL_PLAINTEXT listener (PLAIN; user ragpulse, password ragpulse-secret)
#   scripts/kafka.sh status   say whether it runs, and where
#
# Needs Java 17+ and Maven: the broker jars come from Maven Central (scripts/kafka/pom.xml)
# and are cached in .cache/kafka/lib. Readiness is a real metadata call (kafka-python, from
# the project's virtualenv), with the broker log shown when it fails.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HOME_DIR=${RAGPULSE_KAFKA_HOME:-$ROOT/.cache/kafka}
LIB=$HOME_DIR/lib
RUN=$HOME_DIR/run
VENV=${RAGPULSE_VENV:-$ROOT/.venv}
READY_TIMEOUT=${KAFKA_READY_TIMEOUT:-90}

need() {
    command -v "$1" >/dev/null 2>&1 || { echo "scripts/kafka.sh: '$1' is not installed: $2" >&2; exit 1; }
}

fetch_jars() {
    local stamp
    stamp=$(sha256sum "$ROOT/scripts/kafka/pom.xml" | cut -c1-16)
    if [ -f "$LIB/.stamp" ] && [ "$(cat "$LIB/.stamp")" = "$stamp" ]; then
        return
    fi
    need mvn "install Maven (e.g. apt-get install maven) to fetch the Kafka broker jars"
    echo "fetching the Kafka broker jars with Maven..." >&2
    rm -rf "$LIB"
    # Maven's launcher writes terminal reset codes even when quiet and colourless: strip them (pipefail keeps
    # a Maven failure a failure).
    mvn -q -B -Dstyle.color=never -f "$ROOT/scripts/kafka/pom.xml" dependency:copy-dependencies -DoutputDirectory="$LIB" 2>&1 \
        | sed 's/\x1b\[[0-9;]*m//g' >&2
    echo "$stamp" > "$LIB/.stamp"
}

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

running() {
    [ -f "$RUN/pid" ] && kill -0 "$(cat "$RUN/pid")" 2>/dev/null
}

write_config() {
    local broker_port controller_port sasl_port
    broker_port=$(free_port)
    controller_port=$(free_port)
    while [ "$controller_port" = "$broker_port" ]; do controller_port=$(free_port); done
    sasl_port=$(free_port)
    while [ "$sasl_port" = "$broker_port" ] || [ "$sasl_port" = "$controller_port" ]; do sasl_port=$(free_port); done
    mkdir -p "$RUN"
    cat > "$RUN/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port,SASL_PLAINTEXT://127.0.0.1:$sasl_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port,SASL_PLAINTEXT://127.0.0.1:$sasl_port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_ragpulse="ragpulse-secret";
inter.broker.listener.name=PLAINTEXT
log.dirs=$RUN/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
    echo "127.0.0.1:$broker_port" > "$RUN/bootstrap"
    echo "127.0.0.1:$sasl_port" > "$RUN/sasl_bootstrap"
    # Like Kafka's own Uuid.randomUuid: never one that starts with "-", which its command line takes for a flag
    # (1 in 64 of them did, and the broker would not format).
    "$PYTHON" -c 'import base64, uuid
while (i := base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")).startswith("-"): pass
print(i)' > "$RUN/cluster-id"
}

start() {
    need java "install Java 17 or newer (e.g. apt-get install openjdk-17-jre-headless)"
    local major
    major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/.*java.specification.version = \([0-9]*\).*/\1/p')
    if [ "${major:-0}" -lt 17 ]; then echo "scripts/kafka.sh: Kafka 4 needs Java 17 or newer, found ${major:-unknown}" >&2; exit 1; fi
    if running; then
        echo "KAFKA_BOOTSTRAP=$(cat "$RUN/bootstrap")"
        return
    fi
    fetch_jars
    # Two tries: free ports are picked before the broker binds them, so another process can
    # take one in between; the second try starts from a fresh directory and fresh ports.
    for attempt in 1 2; do
        launch
        if wait_ready; then
            echo "KAFKA_BOOTSTRAP=$(cat "$RUN/bootstrap")"
            return
        fi
        echo "scripts/kafka.sh: the broker did not become ready (try $attempt of 2); its log:" >&2
        tail -n 60 "$RUN/broker.log" >&2
        stop
        rm -rf "$RUN"
    done
    exit 1
}

launch() {
    [ -f "$RUN/server.properties" ] || write_config
    if [ ! -f "$RUN/data/meta.properties" ]; then
        java -cp "$LIB/*" -Dlog4j2.configurationFile="$ROOT/scripts/kafka/log4j2.properties" \
            kafka.tools.StorageTool format -t "$(cat "$RUN/cluster-id")" -c "$RUN/server.properties" >"$RUN/format.log" 2>&1 \
            || { cat "$RUN/format.log" >&2; exit 1; }
    fi
    nohup java -Xms256m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
        -Dlog4j2.configurationFile="$ROOT/scripts/kafka/log4j2.properties" \
        -cp "$LIB/*" kafka.Kafka "$RUN/server.properties" >>"$RUN/broker.log" 2>&1 &
    echo $! > "$RUN/pid"
}

wait_ready() {
    "$PYTHON" - "$(cat "$RUN/bootstrap")" "$READY_TIMEOUT" "$(cat "$RUN/pid")" <<'PY'
import os, sys, time
from kafka import KafkaAdminClient
bootstrap, timeout, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("the broker process exited")
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=3000)
        brokers = admin.describe_cluster()["brokers"]  # a real metadata round trip
        admin.close()
        if brokers:
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.5)
sys.exit(f"no metadata answer within {timeout:g}s")
PY
}

stop() {
    if running; then
        local pid
        pid=$(cat "$RUN/pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$RUN/pid"
}

PYTHON=${PYTHON:-$VENV/bin/python}
[ -x "$PYTHON" ] || { echo "scripts/kafka.sh: no virtualenv at $VENV: run scripts/test or scripts/demo first" >&2; exit 1; }

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    clean) stop; rm -rf "$RUN" ;;
    sasl) running && cat "$RUN/sasl_bootstrap" || { echo "scripts/kafka.sh: not running" >&2; exit 1; } ;;
    status)
        if running; then echo "running: KAFKA_BOOTSTRAP=$(cat "$RUN/bootstrap") (pid $(cat "$RUN/pid"))"; else echo "not running"; exit 1; fi ;;
    *) echo "usage: scripts/kafka.sh start|stop|clean|status|sasl" >&2; exit 2 ;;
esac
