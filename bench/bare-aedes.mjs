// The floor of the fleet benches: Aedes with no hooks behind a mutual-TLS server that asks for the device's
// certificate, as the embedded broker does, and nothing else (no database, no presence, no configs).
// `node bench/bare-aedes.mjs <port> <dir>`: <dir> holds server.pem, server.key and ca.pem
// (`node apps/api/dist/keys.js broker-certificate`). Prints `listening` once the port is open.
// BARE_MAX_PENDING=<n>: as the embedded broker does, a connection arriving while n are in their handshake
// is closed at once (0, the default: none is, as with plain Aedes).
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { Aedes } from 'aedes';

const [port, dir] = process.argv.slice(2);
const read = (f) => fs.readFileSync(path.join(dir, f), 'utf8');
const broker = await Aedes.createBroker();
const server = tls.createServer(
  { key: read('server.key'), cert: read('server.pem'), ca: read('ca.pem'), requestCert: true, rejectUnauthorized: true, handshakeTimeout: 10_000, noDelay: true },
  (socket) => broker.handle(socket),
);
const maxPending = Number(process.env.BARE_MAX_PENDING ?? 0);
if (maxPending > 0) {
  const handshaking = new Map();
  const keys = new WeakMap();
  const keyOf = (socket) => `${socket.remoteAddress}|${socket.remotePort}`;
  server.prependListener('connection', (socket) => keys.set(socket, keyOf(socket)));
  server.on('connection', (socket) => {
    if (handshaking.size >= maxPending) return void socket.destroy();
    const key = keys.get(socket);
    handshaking.set(key, socket);
    socket.once('close', () => handshaking.get(key) === socket && handshaking.delete(key));
  });
  server.on('secureConnection', (socket) => handshaking.delete(keyOf(socket)));
}
server.listen(Number(port), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => process.exit(0));
