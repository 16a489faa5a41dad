import { zodResolver } from '@hookform/resolvers/zod';
import { choosePasswordFormSchema, type AuthErrorEntry } from '@latchkey/contract';
import { Alert, Button, Typography } from '@mui/material';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate } from 'react-router';
import { paths } from '../../lib/paths';
import { clearSession } from '../../lib/session';
import { useLinkSecrets } from '../../lib/use-link-secrets';
import { acceptInvitation, InvitationLinkSpent } from './api';
import { AuthPageFrame } from './auth-page-frame';
import { AuthTextField } from './auth-text-field';
import { AuthErrorDialog } from './auth-error-dialog';
import { authErrorOf } from './auth-error';

const LINK = ['email', 'code'] as const;

/**
 * /accept-invite#email=&code= from the invitation email (the fragment: never sent to a server): choose a
 * password, then you are signed in.
 */
export function AcceptInvitePage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const link = useLinkSecrets(LINK);
  const email = link.email;
  // From the emailed link the code is in the fragment; after a code sign-in on /login it travels in router state.
  const state = useLocation().state as { code?: string; signedIn?: boolean } | null;
  const code = link.code || state?.code || '';
  const [error, setError] = useState<AuthErrorEntry | null>(null);
  const form = useForm({
    resolver: zodResolver(choosePasswordFormSchema),
    mode: 'onTouched',
    defaultValues: { password: '', repeatPassword: '' },
  });

  const onSubmit = form.handleSubmit(async ({ password }) => {
    setError(null);
    try {
      await acceptInvitation(email, code, password, state?.signedIn === true);
      await navigate(paths.start);
    } catch (e) {
      // A half-finished exchange must not leave the code's session behind.
      clearSession();
      // The activation-link-expired message: a spent or expired link is not a typing mistake.
      setError(e instanceof InvitationLinkSpent ? { title: t('auth.linkExpiredTitle'), message: t('auth.linkExpired') } : authErrorOf(e));
    }
  });

  return (
    <AuthPageFrame titleId="invite-title" title={t('auth.inviteTitle')} onSubmit={onSubmit}>
      {!email || !code ? (
        <Alert severity="warning">{t('auth.inviteMissing')}</Alert>
      ) : (
        <>
          <Typography>{t('auth.inviteIntro', { email })}</Typography>
          <AuthTextField
            control={form.control}
            name="password"
            label={t('auth.password')}
            type="password"
            autoComplete="new-password"
            required
          />
          <AuthTextField
            control={form.control}
            name="repeatPassword"
            label={t('auth.repeatPassword')}
            type="password"
            autoComplete="new-password"
            required
          />
          <Button type="submit" variant="contained" fullWidth size="large" disabled={form.formState.isSubmitting} sx={{ mt: 2 }}>
            {t('auth.choosePassword')}
          </Button>
        </>
      )}
      <AuthErrorDialog error={error} onDismiss={() => setError(null)} />
    </AuthPageFrame>
  );
}
