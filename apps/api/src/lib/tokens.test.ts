import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config.js';
import { createDatabase, type Database } from '../db/client.js';
import { TokenService } from './tokens.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-tokens-'));
let database: Database;
beforeAll(async () => {
  database = await createDatabase({});
  await database.migrate();
});
afterAll(async () => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  await database.close();
});
afterEach(() => vi.useRealTimers());

async function service(env: Record<string, string> = {}) {
  const tokens = await TokenService.create(loadConfig({ DATA_DIR: dataDir, ...env }), database.db);
  tokens.stop();
  return tokens;
}
const claims = { sub: '7d0f4c1e-4d7e-4a53-9d0f-1a2b3c4d5e6f', email: 'a@example.com', sid: '0b8f5d8e-1f5e-4f9e-9b7a-2c3d4e5f6a7b' };

describe('access-token verification cache', () => {
  it('answers a repeated token from the cache with the same claims', async () => {
    const tokens = await service();
    const token = await tokens.signAccess(claims);
    expect(await tokens.verifyAccess(token)).toEqual(claims);
    expect(await tokens.verifyAccess(token)).toEqual(claims);
  });

  it('refuses a cached token once it has expired', async () => {
    const tokens = await service({ ACCESS_TOKEN_TTL_SECONDS: '60' });
    const token = await tokens.signAccess(claims);
    await tokens.verifyAccess(token);
    vi.useFakeTimers({ now: Date.now() + 120_000, toFake: ['Date'] });
    await expect(tokens.verifyAccess(token)).rejects.toThrow();
  });

  it('never lets a cached token vouch for a different text', async () => {
    const tokens = await service();
    const token = await tokens.signAccess(claims);
    await tokens.verifyAccess(token);
    const [h, p, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: 'someone-else' })).toString('base64url');
    await expect(tokens.verifyAccess(`${h}.${forged}.${sig}`)).rejects.toThrow();
  });
});
