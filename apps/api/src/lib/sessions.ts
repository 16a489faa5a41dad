import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { AuthResponse } from '@latchkey/contract';
import type { FastifyInstance } from 'fastify';
import { sessions } from '../db/schema.js';

/** A session: a row holding the only refresh-token id still valid, and a per-session Ed25519 pair. */
export async function createSession(
  app: FastifyInstance,
  user: { id: string; email: string },
  passwordChangeRequired = false,
  options: { userAgent?: string | null; secondFactor?: boolean } = {},
): Promise<AuthResponse> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicDer = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const refreshJti = randomUUID();
  const [session] = await app.db
    .insert(sessions)
    .values({
      userId: user.id,
      refreshJti,
      publicKey: publicDer,
      expiresAt: new Date(Date.now() + app.config.jwt.refreshTtl * 1000),
      userAgent: options.userAgent ? options.userAgent.slice(0, 300) : null,
      lastUsedAt: new Date(),
      secondFactor: options.secondFactor ?? false,
    })
    .returning({ id: sessions.id });
  const sid = session!.id;
  const [authToken, refresh] = await Promise.all([
    app.tokens.signAccess({ sub: user.id, email: user.email, sid }),
    app.tokens.signRefresh({ sub: user.id, sid, jti: refreshJti }),
  ]);
  return {
    authToken,
    refreshToken: refresh.token,
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    publicKey: publicDer,
    ...(passwordChangeRequired ? { passwordChangeRequired: true } : {}),
  };
}
