import fs from 'node:fs';
import path from 'node:path';

/**
 * Data at rest is the owner's only. The service and its commands set umask 077 before they write anything,
 * so the embedded database (PGlite makes its files 0666 less the umask), the uploads, the mail outbox and
 * the backups are created 0600 / 0700; and DATA_DIR, with whatever an earlier version or a looser umask
 * left in it, is tightened at start: group and others lose every permission.
 */
export function ownerOnlyFiles(): void {
  process.umask(0o077);
}

/**
 * Creates DATA_DIR (0700) or takes group and other permissions off it and everything in it (symbolic links
 * are left alone). Returns how many entries it tightened; `warn` hears of what it could not change.
 */
export function secureDataDir(dataDir: string, warn: (message: string) => void): number {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let tightened = 0;
  let refused = 0;
  const visit = (entry: string) => {
    const stat = fs.lstatSync(entry, { throwIfNoEntry: false });
    if (!stat || stat.isSymbolicLink()) return;
    if (stat.mode & 0o077) {
      try {
        fs.chmodSync(entry, stat.mode & 0o700);
        tightened++;
      } catch {
        refused++;
      }
    }
    if (stat.isDirectory()) for (const name of fs.readdirSync(entry)) visit(path.join(entry, name));
  };
  visit(dataDir);
  if (refused > 0) warn(`${refused} files or folders in ${dataDir} are readable by others and could not be made owner-only (not this user's): change their owner or mode`);
  return tightened;
}
