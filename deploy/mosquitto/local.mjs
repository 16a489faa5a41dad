// The shipped mosquitto.conf and acl of this folder, rewritten for one local run (the tests' and the bench's
// Mosquitto): the devices' listener on 127.0.0.1:<port> and the service's on 127.0.0.1:<servicePort> (left
// out without one: then a single instance of the service connects to the devices' listener), its TLS files
// and ACL in `dir`, no persistence, logs on stderr, and the current user (Mosquitto drops to `mosquitto`
// when started as root). What the deployment runs is what they run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Writes the configuration and its files into `dir` and answers the configuration's path.
 * @param {string} dir
 * @param {{ port: number; servicePort?: number; ca: string; cert: string; key: string; crl: string }} material PEMs
 * @returns {string}
 */
export function writeLocalMosquittoConfig(dir, { port, servicePort, ca, cert, key, crl }) {
  const file = (name, text) => (fs.writeFileSync(path.join(dir, name), text), path.join(dir, name));
  const paths = {
    '/mosquitto/tls/ca.pem': file('ca.pem', ca),
    '/mosquitto/tls/server.pem': file('server.pem', cert),
    '/mosquitto/tls/server.key': file('server.key', key),
    '/mosquitto/tls/crl.pem': file('crl.pem', crl),
    '/mosquitto/config/acl': file('acl', fs.readFileSync(path.join(here, 'acl'), 'utf8')),
  };
  const ports = { 8883: port, 8884: servicePort };
  // The shipped listeners, each with the lines up to the next listener (or the ACL, which applies to all).
  let listener = null;
  const lines = fs
    .readFileSync(path.join(here, 'mosquitto.conf'), 'utf8')
    .split('\n')
    .filter((line) => !/^(persistence|persistence_location|log_dest)\b/.test(line))
    .flatMap((line) => {
      const shipped = /^listener\s+(\d+)/.exec(line);
      if (shipped) {
        if (!(shipped[1] in ports)) throw new Error(`deploy/mosquitto/mosquitto.conf has a listener the local run does not know: ${line}`);
        listener = ports[shipped[1]];
        return listener === undefined ? [] : [`listener ${listener} 127.0.0.1`];
      }
      if (/^acl_file\s/.test(line)) listener = null;
      if (listener === undefined) return [];
      const [option, value] = line.split(/\s+/, 2);
      return [value && paths[value] ? `${option} ${paths[value]}` : line];
    });
  const unknown = lines.find((line) => /\/mosquitto\//.test(line) && !line.startsWith('#'));
  if (unknown) throw new Error(`deploy/mosquitto/mosquitto.conf names a file the local run does not write: ${unknown}`);
  return file('mosquitto.conf', [`user ${os.userInfo().username}`, 'persistence false', 'log_dest stderr', ...lines, ''].join('\n'));
}
