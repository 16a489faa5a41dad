import { zodResolver } from '@hookform/resolvers/zod';
import { loginSchema, type AuthErrorEntry } from '@latchkey/contract';
import { Box, Button, Link, Typography } from '@mui/material';
import { lazy, Suspense, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router';
import { paths } from '../../lib/paths';
import { RETURN_PARAM, safeReturnPath } from '../../lib/return-path';
import { storeSignIn } from '../../lib/session';
import { completeSignIn, login } from './api';
import { AuthTextField } from './auth-text-field';
import { authErrorOf } from './auth-error';

// The dialog (MUI's Modal, focus trap and transitions, ~7 KB gzip) is not needed to draw the form: it
// starts loading as the page first renders, in its own chunk, long before anyone can submit.
const AuthErrorDialog = lazy(() => import('./auth-error-dialog').then((m) => ({ default: m.AuthErrorDialog })));

export function LoginPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  // A deep link opened while signed out comes back here (the guard); only a path on this origin is taken.
  const [searchParams] = useSearchParams();
  const returnTo = safeReturnPath(searchParams.get(RETURN_PARAM));
  const [error, setError] = useState<AuthErrorEntry | null>(null);
  const form = useForm({ resolver: zodResolver(loginSchema), defaultValues: { email: '', password: '' }, mode: 'onTouched' });
  const { isSubmitting } = form.formState;

  // The WebAuthn library loads only when asked for (the /login bundle stays as it was).
  const [passkeyPending, setPasskeyPending] = useState(false);
  const onPasskey = async () => {
    setError(null);
    setPasskeyPending(true);
    try {
      const { signInWithPasskey } = await import('./passkey-sign-in');
      await completeSignIn(await signInWithPasskey());
      await navigate(returnTo ?? paths.start);
    } catch (e) {
      // The person closed the browser's passkey prompt: nothing to report.
      if (!(e instanceof Error && e.name === 'NotAllowedError')) setError(authErrorOf(e));
    } finally {
      setPasskeyPending(false);
    }
  };

  const onSubmit = form.handleSubmit(async (values) => {
    setError(null);
    try {
      const auth = await login(values);
      if (auth.passwordChangeRequired) {
        // Signed in with an invitation code: the user must choose a password before going on.
        storeSignIn(auth);
        const query = new URLSearchParams({ email: values.email });
        await navigate(`${paths.acceptInvite}?${query}`, { state: { code: values.password, signedIn: true } });
        return;
      }
      await completeSignIn(auth);
      await navigate(returnTo ?? paths.start);
    } catch (e) {
      setError(authErrorOf(e));
    }
  });

  return (
    <Box component="form" noValidate onSubmit={onSubmit} aria-labelledby="login-title">
      <Typography id="login-title" variant="h2" component="h2" sx={{ fontSize: '1.125rem', mb: 1 }}>
        {t('auth.loginTitle')}
      </Typography>
      <AuthTextField control={form.control} name="email" label={t('auth.email')} type="email" autoComplete="email" required />
      <AuthTextField
        control={form.control}
        name="password"
        label={t('auth.password')}
        type="password"
        autoComplete="current-password"
        required
      />
      <Typography sx={{ textAlign: 'right' }}>
        <Link component={RouterLink} to={paths.forgotPassword}>
          {t('auth.forgotLink')}
        </Link>
      </Typography>
      <Button type="submit" variant="contained" fullWidth size="large" disabled={isSubmitting} sx={{ mt: 2 }}>
        {t('auth.login')}
      </Button>
      <Button
        variant="outlined"
        fullWidth
        size="large"
        disabled={isSubmitting || passkeyPending}
        sx={{ mt: 1 }}
        onClick={() => void onPasskey()}
      >
        {t('auth.passkey')}
      </Button>
      <Typography sx={{ mt: 2, textAlign: 'center' }}>
        {t('auth.noAccount')}{' '}
        <Link component={RouterLink} to={paths.register}>
          {t('auth.register')}
        </Link>
      </Typography>
      <Suspense fallback={null}>
        <AuthErrorDialog error={error} onDismiss={() => setError(null)} />
      </Suspense>
    </Box>
  );
}
