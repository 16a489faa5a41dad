import { shellWord } from '../../../lib/code-literals';

/** The values the example script takes, as the Getting Started guide fills them in for one application. */
export interface UnlockSnippetValues {
  /** Absolute API base on this deployment, e.g. https://portal.example.com/api. */
  apiBase: string;
  issuer: string;
  kid: string;
  audience: string;
  lockId: string;
  userEmail: string;
}

export const EXAMPLE_SCRIPT = 'examples/unlock-from-backend.mjs';
export const KEY_FILE_PLACEHOLDER = './my-signing-key.json';
export const USER_EMAIL_PLACEHOLDER = 'alice@example.com';

/** Every value enters the command as one shell word that expands to exactly it (lib/code-literals). */
export { shellWord };

/** The shell lines that install jose and run the script with this application's values. */
export function unlockCommand(v: UnlockSnippetValues): string {
  const env: [string, string][] = [
    ['LATCHKEY_API', v.apiBase],
    ['KEY_FILE', KEY_FILE_PLACEHOLDER],
    ['KEY_ID', v.kid],
    ['ISSUER', v.issuer],
    ['AUDIENCE', v.audience],
    ['LOCK_ID', v.lockId],
    ['USER_EMAIL', v.userEmail],
  ];
  return [
    'npm install jose',
    ...env.map(([name, value]) => `${name}=${shellWord(value)} \\`),
    `node ${EXAMPLE_SCRIPT}`,
  ].join('\n');
}
