import path from 'node:path';
import { loadConfig } from './config.js';
import { createDatabase } from './db/client.js';
import { SecretBox } from './lib/secret-box.js';
import { ensureSigningKey, rotateSigningKey } from './lib/signing-keys.js';

/**
 * `npm run keys:rotate`: a new signing key for every instance on this database. Running instances start
 * signing with it within SIGNING_KEYS_REFRESH_SECONDS; the key it replaces verifies for as long as a
 * refresh token lives (plus a minute of clock and refresh slack), then is retired.
 */
const config = loadConfig();
const command = process.argv[2];
if (command !== 'rotate') {
  console.error('Usage: npm run keys:rotate');
  process.exit(2);
}
if (config.jwt.privateKey) {
  console.error('JWT_PRIVATE_KEY is set: this deployment manages its signing key itself (see docs/deploy.md).');
  process.exit(1);
}
// Two connections: migrate() holds its advisory lock on one and runs the migrations on another.
const database = await createDatabase({ url: config.database.url, dataDir: path.join(config.dataDir, 'pgdata'), poolSize: 2 });
try {
  await database.migrate();
  const box = new SecretBox(config.secretsEncryptionKey);
  await ensureSigningKey(database.db, box, config.dataDir);
  const rotated = await rotateSigningKey(database.db, box, config.jwt.refreshTtl + 60);
  console.log(`New signing key ${rotated.kid} is active.`);
  if (rotated.previousKid) console.log(`Previous key ${rotated.previousKid} verifies until ${rotated.verifyUntil.toISOString()}, then is retired.`);
} finally {
  await database.close();
}
