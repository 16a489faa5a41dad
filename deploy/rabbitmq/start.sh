#!/bin/sh
# Starts one RabbitMQ node of Latchkey's device broker: the device CA fetched from the API, the server
# certificate `keys.js broker-certificate` wrote to $CERTS, BROKER_AUTH_SECRET written into the auth
# backend's URLs, and the MQTT and HTTP-auth plugins enabled. Start the seed node (rabbit@broker-1) first.
set -eu
API=${LATCHKEY_API:-http://lb/api}
CERTS=${CERTS:-/certs}
TLS=${TLS_DIR:-/etc/rabbitmq/tls}
SHIPPED=${SHIPPED_DIR:-/latchkey/deploy/rabbitmq}
: "${BROKER_AUTH_SECRET:?set BROKER_AUTH_SECRET, the same as the service's}"

mkdir -p "$TLS"
until wget -qO "$TLS/ca.pem.new" "$API/device-ca/certificate.pem" && [ -s "$TLS/ca.pem.new" ]; do
  echo "waiting for $API to serve the device CA"
  sleep 2
done
mv "$TLS/ca.pem.new" "$TLS/ca.pem"
cp "$CERTS/server.pem" "$TLS/server.pem"
cp "$CERTS/server.key" "$TLS/server.key"
chown -R rabbitmq "$TLS" && chmod 600 "$TLS/server.key"

# The secret goes into the URLs as the HTTP Basic password: only characters a URL carries as they are.
case "$BROKER_AUTH_SECRET" in *[!A-Za-z0-9._~-]*) echo "BROKER_AUTH_SECRET: use letters, digits and . _ ~ - only" >&2; exit 1 ;; esac
sed "s/BROKER_AUTH_SECRET/$BROKER_AUTH_SECRET/g" "$SHIPPED/rabbitmq.conf" > /etc/rabbitmq/rabbitmq.conf
cp "$SHIPPED/definitions.json" /etc/rabbitmq/definitions.json
echo '[rabbitmq_mqtt,rabbitmq_auth_backend_http].' > /etc/rabbitmq/enabled_plugins
exec rabbitmq-server
