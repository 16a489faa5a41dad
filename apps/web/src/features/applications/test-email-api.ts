import { testEmailResultSchema, type TestEmailBody, type TestEmailResult } from '@latchkey/contract';
import { request } from '../../lib/http';

/** The Email & Branding card's unsaved preferences, as the sample email, to the signed-in owner. */
export async function sendTestEmail(applicationId: string, body: TestEmailBody): Promise<TestEmailResult> {
  const res = await request(`/platform/application/${encodeURIComponent(applicationId)}/email/test`, { method: 'POST', body });
  return testEmailResultSchema.parse(await res.json());
}
