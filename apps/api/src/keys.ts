import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from './config.js';
import { createDatabase } from './db/client.js';
import { SecretBox } from './lib/secret-box.js';
import { ensureSigningKey, rotateSigningKey } from './lib/signing-keys.js';
import { DeviceCa } from './modules/devices/device-ca.js';

/**
 * `npm run keys:rotate`: a new signing key for every instance on this database. Running instances start
 * signing with it within SIGNING_KEYS_REFRESH_SECONDS; the key it replaces verifies for as long as a
 * refresh token lives (plus a minute of clock and refresh slack), then is retired.
 *
 * `node dist/keys.js broker-certificate <dir> <host>…`: an external broker's server certificate from the
 * device CA, for these DNS names and IP addresses, written to <dir> as server.pem, server.key and ca.pem.
 * Devices trust the device CA alone, so a broker they connect to must present one of these.
 */
const USAGE = 'Usage: npm run keys:rotate\n       node apps/api/dist/keys.js broker-certificate <dir> <host>…';
const config = loadConfig();
const [command, dir, ...hosts] = process.argv.slice(2);
if (command !== 'rotate' && !(command === 'broker-certificate' && dir && hosts.length > 0)) {
  console.error(USAGE);
  process.exit(2);
}
if (command === 'rotate' && config.jwt.privateKey) {
  console.error('JWT_PRIVATE_KEY is set: this deployment manages its signing key itself (see docs/deploy.md).');
  process.exit(1);
}
// Two connections: migrate() holds its advisory lock on one and runs the migrations on another.
const database = await createDatabase({ url: config.database.url, dataDir: path.join(config.dataDir, 'pgdata'), poolSize: 2 });
try {
  await database.migrate();
  const box = new SecretBox(config.secretsEncryptionKey);
  if (command === 'broker-certificate') {
    const tls = await (await DeviceCa.load(database.db, box)).issueServerCertificate(hosts);
    fs.mkdirSync(dir!, { recursive: true });
    fs.writeFileSync(path.join(dir!, 'server.key'), tls.key, { mode: 0o600 });
    fs.writeFileSync(path.join(dir!, 'server.pem'), tls.cert);
    fs.writeFileSync(path.join(dir!, 'ca.pem'), tls.ca);
    console.log(`Broker certificate for ${hosts.join(', ')} (valid a year) written to ${dir}: server.pem, server.key, ca.pem.`);
  } else {
    await ensureSigningKey(database.db, box, config.dataDir);
    const rotated = await rotateSigningKey(database.db, box, config.jwt.refreshTtl + 60);
    console.log(`New signing key ${rotated.kid} is active.`);
    if (rotated.previousKid) console.log(`Previous key ${rotated.previousKid} verifies until ${rotated.verifyUntil.toISOString()}, then is retired.`);
  }
} finally {
  await database.close();
}
