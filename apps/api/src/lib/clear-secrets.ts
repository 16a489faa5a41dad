import type { SecretBox } from './secret-box.js';

/** Runs one statement (a Database's executeSql, or a pg client's query). */
export type Sql = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

/** How many secrets the database holds unsealed, by kind. */
export interface ClearSecrets {
  /** Server secrets: the platform CA's and the device CA's private keys, the upload-URL and code secrets. */
  serverSecrets: number;
  /** The portal's token signing keys (their private halves; retired ones have none). */
  signingKeys: number;
  /** Webhook signing secrets (whsec_…). */
  webhookSecrets: number;
  /** Access codes (the digits, kept so owners can be shown them again) and devices' offline-code secrets. */
  doorSecrets: number;
  total: number;
}

/** A value sealed by lib/secret-box.ts starts so; anything else is stored as it is. */
const SEALED = 'enc:v1:%';

/** Counts the secrets stored in clear: written while SECRETS_ENCRYPTION_KEY was not set. */
export async function countClearSecrets(sql: Sql): Promise<ClearSecrets> {
  const { rows } = await sql(
    `select
       (select count(*) from server_secrets where value not like $1)::int as "serverSecrets",
       (select count(*) from signing_keys where private_key is not null and private_key not like $1)::int as "signingKeys",
       (select count(*) from webhooks where secret not like $1)::int as "webhookSecrets",
       ((select count(*) from access_codes where sealed_code not like $1)
         + (select count(*) from lock_devices where offline_code_secret is not null and offline_code_secret not like $1))::int as "doorSecrets"`,
    [SEALED],
  );
  const counts = rows[0] as Omit<ClearSecrets, 'total'>;
  return { ...counts, total: counts.serverSecrets + counts.signingKeys + counts.webhookSecrets + counts.doorSecrets };
}

/** "2 server secrets (CA private keys and the like), 1 webhook secret" — what a message names. */
export function describeClearSecrets(counts: ClearSecrets): string {
  const parts: string[] = [];
  if (counts.serverSecrets) parts.push(`${counts.serverSecrets} server secret${counts.serverSecrets === 1 ? '' : 's'} (the CA private keys among them)`);
  if (counts.signingKeys) parts.push(`${counts.signingKeys} token signing key${counts.signingKeys === 1 ? '' : 's'}`);
  if (counts.webhookSecrets) parts.push(`${counts.webhookSecrets} webhook secret${counts.webhookSecrets === 1 ? '' : 's'}`);
  if (counts.doorSecrets) parts.push(`${counts.doorSecrets} access code${counts.doorSecrets === 1 ? '' : 's'} or offline-code secret${counts.doorSecrets === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/**
 * With SECRETS_ENCRYPTION_KEY set, seals every secret stored in clear before it was (each row compared and
 * set, so instances starting together seal each one once). Returns how many it sealed.
 */
export async function sealClearSecrets(sql: Sql, box: SecretBox): Promise<number> {
  if (!box.encrypts) return 0;
  let sealed = 0;
  const targets = [
    { table: 'server_secrets', key: 'name', column: 'value' },
    { table: 'signing_keys', key: 'kid', column: 'private_key' },
    { table: 'webhooks', key: 'id', column: 'secret' },
    { table: 'access_codes', key: 'id', column: 'sealed_code' },
    { table: 'lock_devices', key: 'id', column: 'offline_code_secret' },
  ];
  for (const { table, key, column } of targets) {
    const { rows } = await sql(`select ${key}::text as key, ${column} as value from ${table} where ${column} is not null and ${column} not like $1`, [SEALED]);
    for (const row of rows as { key: string; value: string }[]) {
      const result = await sql(`update ${table} set ${column} = $1 where ${key}::text = $2 and ${column} = $3 returning ${key}`, [box.seal(row.value), row.key, row.value]);
      sealed += result.rows.length;
    }
  }
  return sealed;
}
