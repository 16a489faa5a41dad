import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { PasskeyResponse } from '@latchkey/contract';

/**
 * A software WebAuthn authenticator for the API tests (the e2e journey uses Chromium's virtual one): a P-256
 * key, "none" attestation, a signature counter that grows. It answers the options the server hands out as a
 * browser would, so the server's real verification runs on it.
 */
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64 = (data: Buffer | Uint8Array) => Buffer.from(data).toString('base64url');

export function softAuthenticator(origin = 'http://localhost:3000', rpID = 'localhost') {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const credentialId = randomBytes(16);
  let counter = 0;
  let userHandle: string | null = null;
  const cose = new Map<number, unknown>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
    [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
  ]);
  const counterBytes = () => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(counter);
    return b;
  };
  const clientData = (type: string, challenge: string, at = origin) => Buffer.from(JSON.stringify({ type, challenge, origin: at, crossOrigin: false }));

  return {
    id: b64(credentialId),
    register(options: { challenge: string; user?: { id: string } }, at = origin): PasskeyResponse {
      userHandle = options.user?.id ?? null;
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(credentialId.length);
      const authData = Buffer.concat([sha256(rpID), Buffer.from([0x45]), counterBytes(), Buffer.alloc(16), idLength, credentialId, Buffer.from(isoCBOR.encode(cose as never))]);
      const attestation = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
      return {
        id: b64(credentialId),
        rawId: b64(credentialId),
        type: 'public-key',
        response: { clientDataJSON: b64(clientData('webauthn.create', options.challenge, at)), attestationObject: b64(attestation), transports: ['internal'] },
        clientExtensionResults: {},
      };
    },
    authenticate(options: { challenge: string }, { at = origin, handle = userHandle }: { at?: string; handle?: string | null } = {}): PasskeyResponse {
      counter += 1;
      const authData = Buffer.concat([sha256(rpID), Buffer.from([0x05]), counterBytes()]);
      const data = clientData('webauthn.get', options.challenge, at);
      const signature = sign('sha256', Buffer.concat([authData, sha256(data)]), privateKey);
      return {
        id: b64(credentialId),
        rawId: b64(credentialId),
        type: 'public-key',
        response: { clientDataJSON: b64(data), authenticatorData: b64(authData), signature: b64(signature), ...(handle ? { userHandle: handle } : {}) },
        clientExtensionResults: {},
      };
    },
  };
}
