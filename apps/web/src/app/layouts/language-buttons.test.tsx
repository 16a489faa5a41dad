import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { LoginPage } from '../../features/auth/login-page';
import { json, renderRoute, stubFetch } from '../../test/helpers';
import { initialLanguage } from '../i18n';
import { SplashLayout } from './splash-layout';

function renderLogin() {
  return renderRoute(<SplashLayout />, { path: '/', initial: '/login', children: [{ path: 'login', element: <LoginPage /> }] });
}

describe('the language switch', () => {
  it('turns the splash page German, sets <html lang> and remembers the choice', async () => {
    const user = userEvent.setup();
    renderLogin();
    expect(screen.getByRole('button', { name: 'Login' })).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Deutsch' }));
    expect(await screen.findByRole('button', { name: 'Anmelden' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Self-Service-Portal' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Deutsch' })).toHaveAttribute('aria-pressed', 'true');
    expect(document.documentElement.lang).toBe('de');
    expect(initialLanguage()).toBe('de');
  });

  it('shows the contract’s validation messages and the server’s failures in German', async () => {
    const calls = stubFetch(() => json({ code: 401, message: 'Wrong email or password' }, 401));
    const user = userEvent.setup();
    renderLogin();
    await user.click(screen.getByRole('button', { name: 'Deutsch' }));

    await user.type(await screen.findByRole('textbox', { name: /E-Mail/ }), 'bad@');
    await user.click(screen.getByRole('button', { name: 'Anmelden' }));
    expect(await screen.findByText('Ungültige E-Mail-Adresse')).toBeInTheDocument();

    await user.type(screen.getByRole('textbox', { name: /E-Mail/ }), 'x.com');
    await user.type(screen.getByLabelText(/Passwort/), 'secret');
    await user.click(screen.getByRole('button', { name: 'Anmelden' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Falsche Anmeldedaten' });
    expect(within(dialog).getByText('Bitte prüfen Sie E-Mail-Adresse und Passwort.')).toBeInTheDocument();
    // Mail the API sends for this reader (an invitation) is written in their language.
    expect(calls[0]!.headers['Accept-Language']).toBe('de');
  });
});
