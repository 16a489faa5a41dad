import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { configKey } from '../../lib/config';
import { ApiError } from '../../lib/http';
import { json, renderRoute, sampleConfig, stubFetch } from '../../test/helpers';
import { EmailedCodeDialog } from './emailed-code-dialog';

const refusal = (message: string) => new ApiError(400, message, 400);

function renderDialog({
  emailDelivery = 'smtp' as 'smtp' | 'outbox',
  outboxHref = undefined as string | undefined,
  onSubmit = vi.fn(async (_code: string) => {}),
  onResend = vi.fn(async () => {}),
  onCancel = vi.fn(),
} = {}) {
  stubFetch((call) => (call.url === '/api/config' ? json({ ...sampleConfig, emailDelivery }) : json({ code: 404, message: 'Not found' }, 404)));
  const { queryClient } = renderRoute(
    <EmailedCodeDialog
      title="Confirm the key"
      intro="We sent a code to me@example.com."
      submitLabel="Check"
      outboxHref={outboxHref}
      onSubmit={onSubmit}
      onResend={onResend}
      onCancel={onCancel}
    />,
  );
  return {
    dialog: screen.getByRole('dialog', { name: 'Confirm the key' }),
    onSubmit,
    onResend,
    onCancel,
    configLoaded: () => vi.waitFor(() => expect(queryClient.getQueryData(configKey)).toBeDefined()),
  };
}

describe('EmailedCodeDialog', () => {
  it('takes digits only and sends the code once it has six', async () => {
    const user = userEvent.setup();
    const { dialog, onSubmit } = renderDialog();
    expect(dialog).toHaveTextContent('We sent a code to me@example.com.');
    const field = within(dialog).getByLabelText('Code from the email');
    const check = within(dialog).getByRole('button', { name: 'Check' });
    await user.type(field, '12a34');
    expect(field).toHaveValue('1234');
    expect(check).toBeDisabled();
    await user.type(field, '5678');
    expect(field).toHaveValue('123456');
    await user.click(check);
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith('123456');
  });

  it('shows a refused code’s reason with the field emptied and focused for another try', async () => {
    const user = userEvent.setup();
    const onSubmit = vi.fn(async (code: string) => {
      if (code === '111111') throw refusal('That code is not right');
    });
    const { dialog } = renderDialog({ onSubmit });
    const field = within(dialog).getByLabelText('Code from the email');
    await user.type(field, '111111{Enter}');
    expect(await within(dialog).findByText('That code is not right')).toBeInTheDocument();
    expect(field).toHaveValue('');
    expect(field).toHaveFocus();
    await user.type(field, '222222{Enter}');
    expect(onSubmit).toHaveBeenLastCalledWith('222222');
    await vi.waitFor(() => expect(within(dialog).queryByText('That code is not right')).toBeNull());
  });

  it('"Send a new code" says one is on its way, or why not; the next try clears the note', async () => {
    const user = userEvent.setup();
    const onResend = vi.fn(async () => {});
    onResend.mockRejectedValueOnce(refusal('Too many codes'));
    // A check that does not answer yet.
    const onSubmit = vi.fn(() => new Promise<void>(() => {}));
    const { dialog } = renderDialog({ onResend, onSubmit });
    const resend = within(dialog).getByRole('button', { name: 'Send a new code' });
    await user.click(resend);
    expect(await within(dialog).findByText('Too many codes')).toBeInTheDocument();
    expect(within(dialog).queryByRole('status')).toBeNull();

    await user.click(resend);
    expect(await within(dialog).findByRole('status')).toHaveTextContent('A new code is on its way');
    expect(within(dialog).queryByText('Too many codes')).toBeNull();
    expect(onResend).toHaveBeenCalledTimes(2);

    await user.type(within(dialog).getByLabelText('Code from the email'), '123456{Enter}');
    await vi.waitFor(() => expect(within(dialog).queryByRole('status')).toBeNull());
    // While the check is under way, the code cannot be sent again.
    expect(within(dialog).getByRole('button', { name: 'Check' })).toBeDisabled();
    await user.keyboard('{Enter}');
    expect(onSubmit).toHaveBeenCalledTimes(1);
  });

  it('Cancel and Escape cancel', async () => {
    const user = userEvent.setup();
    const { dialog, onCancel, onSubmit } = renderDialog();
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(onCancel).toHaveBeenCalledTimes(1);
    await user.keyboard('{Escape}');
    expect(onCancel).toHaveBeenCalledTimes(2);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('without SMTP, points to the Outbox it is given', async () => {
    const { dialog } = renderDialog({ emailDelivery: 'outbox', outboxHref: '/app-1/outbox' });
    expect(await within(dialog).findByText(/the email is in the Outbox\./)).toBeInTheDocument();
    expect(within(dialog).getByRole('link', { name: 'Open the Outbox' })).toHaveAttribute('href', '/app-1/outbox');
  });

  it('without SMTP and no Outbox given, says the email is in each of the account’s applications’ Outboxes', async () => {
    const { dialog } = renderDialog({ emailDelivery: 'outbox' });
    expect(await within(dialog).findByText(/the email is in the Outbox of each of your applications/)).toBeInTheDocument();
    expect(within(dialog).queryByRole('link')).toBeNull();
  });

  it('with SMTP, says nothing of an Outbox', async () => {
    const { dialog, configLoaded } = renderDialog({ emailDelivery: 'smtp', outboxHref: '/app-1/outbox' });
    await configLoaded();
    expect(within(dialog).queryByText(/Outbox/)).toBeNull();
  });
});
