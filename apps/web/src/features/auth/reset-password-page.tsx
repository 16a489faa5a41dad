import { zodResolver } from '@hookform/resolvers/zod';
import { addRecoveryTexts } from './recovery-texts';
import { accountErrors, resetPasswordFormSchema } from '@latchkey/contract';
import { Alert, Button, Typography } from '@mui/material';
import { useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useNavigate } from 'react-router';
import { paths } from '../../lib/paths';
import { PasswordStrengthHint } from '../../components/ui/password-strength-hint';
import { ApiError, errorMessage } from '../../lib/http';
import { resetPassword } from '../../lib/trust-api';
import { useLinkSecrets } from '../../lib/use-link-secrets';
import { completeSignIn } from './api';
import { AuthPageFrame } from './auth-page-frame';
import { AuthTextField } from './auth-text-field';

addRecoveryTexts();

const LINK = ['userId', 'token'] as const;
const SPENT: readonly string[] = [accountErrors.resetLinkUsed, accountErrors.resetLinkExpired, accountErrors.resetLinkInvalid];

/**
 * /reset-password#userId=&token= from the email (the fragment: never sent to a server): a new password (the contract's password rules), then every session of
 * the account has ended and this one is signed in. A used, expired or broken link says so and offers a new one.
 */
export function ResetPasswordPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { userId, token } = useLinkSecrets(LINK);
  const [error, setError] = useState<{ message: string; spent: boolean } | null>(null);
  const form = useForm({ resolver: zodResolver(resetPasswordFormSchema), mode: 'onTouched', defaultValues: { password: '', repeatPassword: '' } });
  const password = useWatch({ control: form.control, name: 'password' });

  const onSubmit = form.handleSubmit(async ({ password }) => {
    setError(null);
    try {
      await completeSignIn(await resetPassword({ userId, token, password }));
      await navigate(paths.start);
    } catch (e) {
      const spent = e instanceof ApiError && e.status === 400 && SPENT.includes(e.message);
      setError({ message: errorMessage(e), spent });
    }
  });

  const incomplete = !userId || !token;
  return (
    <AuthPageFrame
      titleId="reset-title"
      title={t('recovery.resetTitle')}
      onSubmit={onSubmit}
      link={{ to: paths.login, label: t('recovery.backToLogin') }}
    >
      {incomplete || error?.spent ? (
        <Alert
          severity="warning"
          action={
            <Button component={RouterLink} to={paths.forgotPassword} color="inherit" size="small">
              {t('recovery.resetAskAgain')}
            </Button>
          }
        >
          {incomplete ? t('recovery.resetIncomplete') : error!.message}
        </Alert>
      ) : (
        <>
          <Typography>{t('recovery.resetIntro')}</Typography>
          <AuthTextField control={form.control} name="password" label={t('recovery.newPassword')} type="password" autoComplete="new-password" required />
          <PasswordStrengthHint password={password} />
          <AuthTextField
            control={form.control}
            name="repeatPassword"
            label={t('auth.repeatPassword')}
            type="password"
            autoComplete="new-password"
            required
          />
          {error ? (
            <Alert severity="error" sx={{ mt: 1 }}>
              {error.message}
            </Alert>
          ) : null}
          <Button type="submit" variant="contained" fullWidth size="large" disabled={form.formState.isSubmitting} sx={{ mt: 2 }}>
            {t('recovery.resetSubmit')}
          </Button>
        </>
      )}
    </AuthPageFrame>
  );
}
