import { zodResolver } from '@hookform/resolvers/zod';
import { registerFormSchema, type AuthErrorEntry } from '@latchkey/contract';
import { Box, Button, Checkbox, FormControlLabel, FormHelperText, Link } from '@mui/material';
import { useState } from 'react';
import { Controller, useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { paths } from '../../lib/paths';
import { PasswordStrengthHint } from '../../components/ui/password-strength-hint';
import { visuallyHidden } from '../../components/ui/visually-hidden';
import { usePortalConfig } from '../../lib/config';
import { completeSignIn, register } from './api';
import { AuthPageFrame } from './auth-page-frame';
import { AuthTextField } from './auth-text-field';
import { AuthErrorDialog } from './auth-error-dialog';
import { authErrorOf } from './auth-error';
import { localText } from '../../lib/server-text';

export function RegisterPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const config = usePortalConfig();
  const [error, setError] = useState<AuthErrorEntry | null>(null);
  const form = useForm({
    resolver: zodResolver(registerFormSchema),
    mode: 'onTouched',
    defaultValues: { email: '', displayName: '', password: '', repeatPassword: '', agreement: false as unknown as true },
  });
  const { isSubmitting } = form.formState;
  const [email, displayName, password] = useWatch({ control: form.control, name: ['email', 'displayName', 'password'] });

  const onSubmit = form.handleSubmit(async ({ email, displayName, password }) => {
    setError(null);
    try {
      await completeSignIn(await register({ email, displayName, password }), displayName);
      await navigate(paths.start);
    } catch (e) {
      setError(authErrorOf(e));
    }
  });

  return (
    <AuthPageFrame
      titleId="register-title"
      title={t('auth.registerTitle')}
      onSubmit={onSubmit}
      link={{ lead: t('auth.haveAccount'), to: paths.login, label: t('auth.login') }}
    >
      <AuthTextField control={form.control} name="email" label={t('auth.email')} type="email" autoComplete="email" required />
      <AuthTextField control={form.control} name="displayName" label={t('auth.displayName')} autoComplete="name" required />
      <AuthTextField
        control={form.control}
        name="password"
        label={t('auth.password')}
        type="password"
        autoComplete="new-password"
        required
      />
      <PasswordStrengthHint password={password} userInputs={[email, displayName]} />
      <AuthTextField
        control={form.control}
        name="repeatPassword"
        label={t('auth.repeatPassword')}
        type="password"
        autoComplete="new-password"
        required
      />
      <Controller
        control={form.control}
        name="agreement"
        render={({ field, fieldState }) => (
          <>
            <FormControlLabel
              control={
                <Checkbox
                  checked={field.value === true}
                  onChange={(e) => field.onChange(e.target.checked)}
                  onBlur={field.onBlur}
                  slotProps={{ input: { ref: field.ref, 'aria-invalid': fieldState.error ? true : undefined } }}
                />
              }
              label={
                <>
                  {t('auth.agreementPrefix')}
                  <Link href={config.data?.privacyPolicyUrl} target="_blank" rel="noopener noreferrer">
                    {t('auth.privacyPolicy')}
                    <Box component="span" sx={visuallyHidden}>
                      {' '}
                      {t('auth.opensInNewTab')}
                    </Box>
                  </Link>
                </>
              }
            />
            {fieldState.error && <FormHelperText error>{localText(fieldState.error.message ?? '')}</FormHelperText>}
          </>
        )}
      />
      <Button type="submit" variant="contained" fullWidth size="large" disabled={isSubmitting} sx={{ mt: 2 }}>
        {t('auth.register')}
      </Button>
      <AuthErrorDialog error={error} onDismiss={() => setError(null)} />
    </AuthPageFrame>
  );
}
