import { accountErrors } from '@latchkey/contract';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { exportPublicKey, generateSigningKey } from '../../lib/signed-operation';
import { json, renderRoute, sampleConfig, stubFetch } from '../../test/helpers';
import { certifyWithSecondFactor } from './unlock-api';
import { useKeyCodeDialog } from './key-code-dialog';

/** The portal's own unlock goes through the SDKs' second-factor flow with a code dialog. */
function Harness({ ephemeralKey, privateKey }: { ephemeralKey: string; privateKey: CryptoKey }) {
  const { askCode, dialog } = useKeyCodeDialog();
  const [result, setResult] = useState('');
  return (
    <>
      <button
        onClick={() =>
          certifyWithSecondFactor(askCode)(ephemeralKey, privateKey).then(
            (c) => setResult(`certified ${c.userId}`),
            (e: Error) => setResult(e.name),
          )
        }
      >
        go
      </button>
      <p>{result}</p>
      {dialog}
    </>
  );
}

describe('the key code dialog', () => {
  it('after a 423 asks for the emailed code, signs it with the key and gets the certificate; a wrong code is asked again', async () => {
    const pair = await generateSigningKey();
    const ephemeralKey = await exportPublicKey(pair.publicKey);
    let checks = 0;
    const calls = stubFetch((call) => {
      if (call.url === '/api/config') return json(sampleConfig);
      if (call.url === '/api/auth/certificate') return json({ code: 423, message: accountErrors.secondFactorRequired }, 423);
      if (call.url.startsWith('/api/auth/certificate/verify')) return json({ method: 'EMAIL' });
      checks += 1;
      return checks === 1 ? json({ code: 400, message: accountErrors.codeWrong }, 400) : json({ certificateChain: ['AA=='], userId: 'me' });
    });
    const user = userEvent.setup();
    renderRoute(<Harness ephemeralKey={ephemeralKey} privateKey={pair.privateKey} />);
    await user.click(screen.getByRole('button', { name: 'go' }));
    const field = await screen.findByLabelText('Code from the email');
    await user.type(field, '12a3456');
    expect(field).toHaveValue('123456');
    await user.click(screen.getByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText(accountErrors.codeWrong)).toBeInTheDocument();
    await user.type(screen.getByLabelText('Code from the email'), '654321');
    await user.click(screen.getByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('certified me')).toBeInTheDocument();
    const posted = calls.filter((c) => c.url !== '/api/config').map((c) => [c.url, c.body]);
    expect(posted[1]).toEqual(['/api/auth/certificate/verify?method=EMAIL', { ephemeralKey }]);
    // The signature over the code's bytes verifies with the key: standard base64 of 64 bytes.
    const signature = (posted.at(-1)![1] as { verificationSignature: string }).verificationSignature;
    const bytes = Uint8Array.from(atob(signature), (c) => c.charCodeAt(0));
    expect(await crypto.subtle.verify('Ed25519', pair.publicKey, bytes, new TextEncoder().encode('654321'))).toBe(true);
  });

  it('Cancel ends the unlock without a certificate', async () => {
    const pair = await generateSigningKey();
    stubFetch((call) => {
      if (call.url === '/api/config') return json(sampleConfig);
      return call.url === '/api/auth/certificate' ? json({ code: 423, message: 'x' }, 423) : json({ method: 'EMAIL' });
    });
    const user = userEvent.setup();
    renderRoute(<Harness ephemeralKey={await exportPublicKey(pair.publicKey)} privateKey={pair.privateKey} />);
    await user.click(screen.getByRole('button', { name: 'go' }));
    await user.click(await screen.findByRole('button', { name: 'Cancel' }));
    expect(await screen.findByText('KeyCodeCancelled')).toBeInTheDocument();
  });

  it('without SMTP, says the email is in the Outbox and links to this application’s', async () => {
    const pair = await generateSigningKey();
    stubFetch((call) => {
      if (call.url === '/api/config') return json({ ...sampleConfig, emailDelivery: 'outbox' });
      return call.url === '/api/auth/certificate' ? json({ code: 423, message: 'x' }, 423) : json({ method: 'EMAIL' });
    });
    const user = userEvent.setup();
    renderRoute(<Harness ephemeralKey={await exportPublicKey(pair.publicKey)} privateKey={pair.privateKey} />, { path: '/:appId/locks/:lockId', initial: '/app-1/locks/lock-1' });
    await user.click(screen.getByRole('button', { name: 'go' }));
    expect(await screen.findByText(/This service sends no real email \(SMTP_URL is not set\): the email is in the Outbox\./)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Open the Outbox' })).toHaveAttribute('href', '/app-1/outbox');
  });

  it('with SMTP, says nothing of an Outbox', async () => {
    const pair = await generateSigningKey();
    stubFetch((call) => {
      if (call.url === '/api/config') return json({ ...sampleConfig, emailDelivery: 'smtp' });
      return call.url === '/api/auth/certificate' ? json({ code: 423, message: 'x' }, 423) : json({ method: 'EMAIL' });
    });
    const user = userEvent.setup();
    renderRoute(<Harness ephemeralKey={await exportPublicKey(pair.publicKey)} privateKey={pair.privateKey} />, { path: '/:appId/locks/:lockId', initial: '/app-1/locks/lock-1' });
    await user.click(screen.getByRole('button', { name: 'go' }));
    expect(await screen.findByLabelText('Code from the email')).toBeInTheDocument();
    expect(screen.queryByText(/SMTP_URL/)).not.toBeInTheDocument();
  });
});
