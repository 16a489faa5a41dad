import { zodResolver } from '@hookform/resolvers/zod';
import { addRecoveryTexts } from './recovery-texts';
import { forgotPasswordFormSchema } from '@latchkey/contract';
import { Alert, Button, Typography } from '@mui/material';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { paths } from '../../lib/paths';
import { errorMessage } from '../../lib/http';
import { requestPasswordReset } from '../../lib/trust-api';
import { AuthPageFrame } from './auth-page-frame';
import { AuthTextField } from './auth-text-field';

addRecoveryTexts();

/**
 * /forgot-password: an email form whose answer is the same whether or not the address has an account
 * (no one learns which addresses exist). The link in the email leads to /reset-password.
 */
export function ForgotPasswordPage() {
  const { t } = useTranslation();
  const [params] = useSearchParams();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const form = useForm({ resolver: zodResolver(forgotPasswordFormSchema), defaultValues: { email: params.get('email') ?? '' }, mode: 'onTouched' });

  const onSubmit = form.handleSubmit(async ({ email }) => {
    setError(null);
    try {
      await requestPasswordReset(email);
      setSentTo(email);
    } catch (e) {
      setError(errorMessage(e));
    }
  });

  return (
    <AuthPageFrame
      titleId="forgot-title"
      title={t('recovery.forgotTitle')}
      onSubmit={onSubmit}
      link={{ to: paths.login, label: t('recovery.backToLogin') }}
    >
      {sentTo ? (
        <Alert severity="success" role="status">
          {t('recovery.forgotSent', { email: sentTo })}
        </Alert>
      ) : (
        <>
          <Typography sx={{ mb: 1 }}>{t('recovery.forgotIntro')}</Typography>
          <AuthTextField control={form.control} name="email" label={t('auth.email')} type="email" autoComplete="email" required />
          {error ? (
            <Alert severity="error" sx={{ mt: 1 }}>
              {error}
            </Alert>
          ) : null}
          <Button type="submit" variant="contained" fullWidth size="large" disabled={form.formState.isSubmitting} sx={{ mt: 2 }}>
            {t('recovery.forgotSend')}
          </Button>
        </>
      )}
    </AuthPageFrame>
  );
}
