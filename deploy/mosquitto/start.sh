#!/bin/sh
# Starts Mosquitto with the device CA and the CRL fetched from Latchkey's API, and the server certificate
# `keys.js broker-certificate` wrote to $CERTS; then fetches the CRL again every $CRL_REFRESH_SECONDS and has
# Mosquitto read it again (SIGHUP): an unbound device is refused at its next connect. The service signs the
# CRL afresh on each request and it is valid for a day, so it is read again each time, changed or not.
set -eu
API=${LATCHKEY_API:-http://lb/api}
CERTS=${CERTS:-/certs}
TLS=${TLS_DIR:-/mosquitto/tls}
CONF=${MOSQUITTO_CONF:-/mosquitto/config/mosquitto.conf}
REFRESH=${CRL_REFRESH_SECONDS:-60}
BROKER_USER=${BROKER_USER:-mosquitto}
DATA=${MOSQUITTO_DATA:-/mosquitto/data}

mkdir -p "$TLS" "$DATA"
chown "$BROKER_USER" "$DATA"
# $1 from the API into $2, atomically; fails when the service does not answer.
fetch() { wget -qO "$2.new" "$API/$1" && [ -s "$2.new" ] && mv "$2.new" "$2"; }
until fetch device-ca/certificate.pem "$TLS/ca.pem" && fetch device-ca/crl.pem "$TLS/crl.pem"; do
  echo "waiting for $API to serve the device CA"
  sleep 2
done
cp "$CERTS/server.pem" "$TLS/server.pem"
cp "$CERTS/server.key" "$TLS/server.key"
# Mosquitto reads them again on SIGHUP as its own user.
chown "$BROKER_USER" "$TLS"/* && chmod 600 "$TLS/server.key" && chmod 644 "$TLS/ca.pem" "$TLS/crl.pem" "$TLS/server.pem"

mosquitto -c "$CONF" &
pid=$!
trap 'kill -TERM "$pid"; wait "$pid"; exit 0' TERM INT
while kill -0 "$pid" 2>/dev/null; do
  sleep "$REFRESH" &
  wait $!
  if fetch device-ca/crl.pem "$TLS/crl.pem"; then
    chmod 644 "$TLS/crl.pem" && kill -HUP "$pid"
  else
    echo "could not fetch the CRL from $API; keeping the one held"
  fi
done
wait "$pid"
