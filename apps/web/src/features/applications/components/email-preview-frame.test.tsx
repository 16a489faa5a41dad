import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { makeJwt, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { EmailPreviewFrame } from './email-preview-frame';

describe('EmailPreviewFrame', () => {
  it('fetches the unsaved branding with the owner’s token and shows it through a sandboxed srcdoc, never as a frame URL', async () => {
    const token = makeJwt({ exp: nowSeconds() + 600 });
    storeSignIn({ authToken: token, refreshToken: 'r' });
    const calls = stubFetch(() => new Response('<html><body><h1>Branded sample</h1></body></html>', { headers: { 'Content-Type': 'text/html; charset=utf-8' } }));
    renderRoute(
      <EmailPreviewFrame
        applicationId="app-1"
        input={{ callToAction: { headline: 'Questions?', actionText: 'Get Help', actionTarget: 'https://help.test' }, primaryColour: '#112233' }}
      />,
    );
    const frame = screen.getByTitle('Email preview');
    await waitFor(() => expect(frame.getAttribute('srcdoc')).toContain('Branded sample'));
    expect(frame).not.toHaveAttribute('src');
    expect(frame.getAttribute('sandbox')).toBe('allow-same-origin');
    const call = calls.find((c) => c.url.startsWith('/api/email/preview/app-1?'));
    expect(call?.headers.Authorization).toBe(`Bearer ${token}`);
    expect(call?.headers.Accept).toBe('text/html');
    expect(new URL(call!.url, 'http://x').searchParams.get('ctaHeadline')).toBe('Questions?');
  });
});
