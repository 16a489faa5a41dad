import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from './config.js';
import { ALLOW_CLEAR_SECRETS, BackupRefused, backup, restore, writeBackupFile } from './backup.js';
import { ownerOnlyFiles } from './lib/private-data.js';

/**
 * `npm run backup -- <file> [--allow-clear-secrets]` and `npm run restore -- <file>` (node apps/api/dist/backup-cli.js backup|restore <file>):
 * the embedded database (from the running service, or its data directory when none runs) or, with
 * DATABASE_URL, PostgreSQL through pg_dump / pg_restore. See src/backup.ts and docs/deploy.md.
 */
// A backup holds the whole database: it, and a restored database, are the owner's only.
ownerOnlyFiles();
const args = process.argv.slice(2);
const allowClearSecrets = args.includes(`--${ALLOW_CLEAR_SECRETS}`);
const [command, fileArg] = args.filter((a) => a !== `--${ALLOW_CLEAR_SECRETS}`);
// npm runs the workspace script in apps/api (where DATA_DIR is resolved); the file is named from where
// the operator typed the command (npm's INIT_CWD).
// eslint-disable-next-line no-restricted-properties -- INIT_CWD is npm's record of the shell's folder, not configuration
const file = fileArg && path.resolve(process.env.INIT_CWD ?? process.cwd(), fileArg);
if ((command !== 'backup' && command !== 'restore') || !file) {
  console.error(`Usage: npm run backup -- <file> [--${ALLOW_CLEAR_SECRETS}]   |   npm run restore -- <file>`);
  process.exit(2);
}
const config = loadConfig();
try {
  if (command === 'backup') {
    const bytes = await backup(config, { allowClearSecrets });
    writeBackupFile(file, bytes);
    console.log(`Backup written to ${file} (${bytes.length} bytes).`);
  } else {
    if (!fs.existsSync(file)) throw new BackupRefused(`No such file: ${file}`);
    console.log(await restore(config, fs.readFileSync(file)));
  }
} catch (error) {
  console.error(error instanceof BackupRefused ? error.message : `${command} failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
