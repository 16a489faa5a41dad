import { shellWord } from '../../../lib/code-literals';

/** The values the example script takes, as the Getting Started guide fills them in for one application. */
export interface UnlockSnippetValues {
  /** Absolute API base on this deployment, e.g. https://portal.example.com/api. */
  apiBase: string;
  /** Absolute URL this portal serves examples/unlock-from-backend.mjs at. */
  scriptUrl: string;
  /** The private key file, relative to the example's folder. */
  keyFile: string;
  issuer: string;
  kid: string;
  /** The key's algorithm, for a PEM key file (the script reads it from a JWK, and takes ES256 for a PEM). */
  alg?: string;
  audience: string;
  lockId: string;
  userEmail: string;
}

export const EXAMPLE_SCRIPT = 'unlock-from-backend.mjs';
/** The folder of its own the example runs in, so `npm install jose` leaves the reader's project alone. */
export const EXAMPLE_FOLDER = 'latchkey-unlock';
export const KEY_FILE_PLACEHOLDER = './my-signing-key.json';
export const USER_EMAIL_PLACEHOLDER = 'alice@example.com';
/** The lines that make the folder, install jose and fetch the script (each ends in `&&`: a failure stops the rest). */
export const SETUP_LINE_COUNT = 3;

/** Every value enters the command as one shell word that expands to exactly it (lib/code-literals). */
export { shellWord };

/**
 * The shell lines that make a folder for the example (not the reader's project), install jose
 * there, fetch the script from this portal and run it with this application's values.
 */
export function unlockCommand(v: UnlockSnippetValues): string {
  const env: [string, string][] = [
    ['LATCHKEY_API', v.apiBase],
    ['KEY_FILE', v.keyFile],
    ['KEY_ID', v.kid],
    ...(v.alg ? ([['ALG', v.alg]] as [string, string][]) : []),
    ['ISSUER', v.issuer],
    ['AUDIENCE', v.audience],
    ['LOCK_ID', v.lockId],
    ['USER_EMAIL', v.userEmail],
  ];
  return [
    `mkdir -p ${EXAMPLE_FOLDER} && cd ${EXAMPLE_FOLDER} &&`,
    'npm init -y >/dev/null && npm install jose &&',
    `curl -fsSLo ${EXAMPLE_SCRIPT} ${shellWord(v.scriptUrl)} &&`,
    ...env.map(([name, value]) => `${name}=${shellWord(value)} \\`),
    `node ${EXAMPLE_SCRIPT}`,
  ].join('\n');
}
