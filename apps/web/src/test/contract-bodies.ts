import {
  accountSchema,
  deviceCreatedSchema,
  deviceStatusSchema,
  applicationSchema,
  applicationUserListSchema,
  authResponseSchema,
  errorBodySchema,
  historyActorSchema,
  historyPageSchema,
  lockLogPageSchema,
  lockSchema,
  lockShareSchema,
  logoUploadResponseSchema,
  ownerSiteSchema,
  passkeyOptionsSchema,
  passkeySchema,
  portalConfigSchema,
  refreshResponseSchema,
  webhookDeliverySchema,
  webhookSchema,
  webhookWithSecretSchema,
} from '@latchkey/contract';
import * as z from 'zod/mini';

/**
 * What the API answers on the routes the portal reads, as packages/contract has it: every fake JSON body a
 * test's stubbed fetch returns for one of these is parsed with the route's schema (and every error body
 * with the error schema), so a fake that drifts from the contract fails the test instead of testing a
 * portal against an API that does not exist. A route not listed here is not checked.
 */
const APP = '/api/platform/application/[^/]+';
const ROUTES: [method: string, path: RegExp, status: number, schema: z.core.$ZodType][] = [
  ['GET', /^\/api\/config$/, 200, portalConfigSchema],
  ['GET', /^\/api\/account$/, 200, accountSchema],
  ['POST', /^\/api\/auth\/token$/, 200, authResponseSchema],
  ['POST', /^\/api\/auth\/token\/refresh$/, 200, refreshResponseSchema],
  ['POST', /^\/api\/auth\/passkey\/options$/, 200, passkeyOptionsSchema],
  ['POST', /^\/api\/auth\/passkey$/, 200, authResponseSchema],
  ['GET', /^\/api\/account\/passkeys$/, 200, z.array(passkeySchema)],
  ['POST', /^\/api\/account\/passkeys\/options$/, 200, passkeyOptionsSchema],
  ['POST', /^\/api\/account\/passkeys$/, 201, passkeySchema],
  ['GET', /^\/api\/platform\/application$/, 200, z.array(applicationSchema)],
  ['GET', new RegExp(`^${APP}$`), 200, applicationSchema],
  ['POST', new RegExp(`^${APP}/logo$`), 200, logoUploadResponseSchema],
  ['GET', new RegExp(`^${APP}/user(\\?.*)?$`), 200, applicationUserListSchema],
  ['GET', new RegExp(`^${APP}/lock/[^/?]+$`), 200, lockSchema],
  ['GET', new RegExp(`^${APP}/lock/[^/]+/user$`), 200, z.array(lockShareSchema)],
  ['GET', new RegExp(`^${APP}/lock/[^/]+/device$`), 200, deviceStatusSchema],
  ['POST', new RegExp(`^${APP}/lock/[^/]+/device$`), 201, deviceCreatedSchema],
  ['GET', new RegExp(`^${APP}/lock$`), 200, z.array(lockSchema)],
  ['GET', new RegExp(`^${APP}/lock/[^/]+/log(\\?.*)?$`), 200, lockLogPageSchema],
  ['GET', new RegExp(`^${APP}/site$`), 200, z.array(ownerSiteSchema)],
  ['GET', new RegExp(`^${APP}/history(\\?.*)?$`), 200, historyPageSchema],
  ['GET', new RegExp(`^${APP}/history/actors(\\?.*)?$`), 200, z.array(historyActorSchema)],
  ['GET', new RegExp(`^${APP}/webhook$`), 200, z.array(webhookSchema)],
  ['POST', new RegExp(`^${APP}/webhook$`), 201, webhookWithSecretSchema],
  ['POST', new RegExp(`^${APP}/webhook/[^/]+/rotate$`), 200, webhookWithSecretSchema],
  ['GET', new RegExp(`^${APP}/webhook/[^/]+/delivery(\\?.*)?$`), 200, z.array(webhookDeliverySchema)],
];

/** The contract's schema for what `method url` answers with `status`, if the route is listed (any error: the error body). */
function contractSchemaFor(method: string, url: string, status: number): z.core.$ZodType | undefined {
  const path = url.replace(/^https?:\/\/[^/]+/, '');
  if (status >= 400) return path.startsWith('/api/') ? errorBodySchema : undefined;
  return ROUTES.find(([m, p, s]) => m === method && s === status && p.test(path))?.[3];
}

/** Bodies that did not match: test/setup.ts fails the test with them after it ends. */
const drifts: string[] = [];
export const takeContractDrifts = () => drifts.splice(0);

/** Parses a fake answer's JSON body with the route's schema; a mismatch is recorded and thrown. */
export async function checkFakeAnswer(method: string, url: string, response: Response): Promise<void> {
  if (!response.headers.get('content-type')?.includes('application/json')) return;
  const schema = contractSchemaFor(method, url, response.status);
  if (!schema) return;
  const result = z.safeParse(schema, await response.clone().json());
  if (result.success) return;
  const drift = `The fake answer to ${method} ${url} (${response.status}) is not what the contract says:\n${z.prettifyError(result.error)}`;
  drifts.push(drift);
  throw new Error(drift);
}

