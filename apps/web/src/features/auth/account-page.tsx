import { zodResolver } from '@hookform/resolvers/zod';
import { addRecoveryTexts } from './recovery-texts';
import { changePasswordSchema, updateAccountSchema, type AccountSession } from '@latchkey/contract';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Chip,
  Container,
  List,
  ListItem,
  ListItemText,
  Stack,
  Typography,
} from '@mui/material';
import { useMutation } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../components/ui/confirm-dialog';
import { FormTextField } from '../../components/ui/form-text-field';
import { PasswordStrengthHint } from '../../components/ui/password-strength-hint';
import { MessageDialog } from '../../components/ui/message-dialog';
import { showSaved } from '../../components/ui/saved-notice';
import { formatDateTime } from '../../lib/dates';
import { errorMessage } from '../../lib/http';
import { setSessionValue } from '../../lib/session';
import { useLogout } from './logout';
import { changePassword, deleteAccount, describeBrowser, useEndSession, useSessions, useUpdateDisplayName } from './account-api';
import { useAccount } from './account-query';
import { PasskeysCard } from './passkeys-card';
import { resendVerification } from '../../lib/trust-api';

addRecoveryTexts();

/**
 * Your account: display name, email and whether it is verified, password change, the sessions
 * you are signed in with (end one, end all), and deleting the account.
 */
export function AccountPage() {
  const { t } = useTranslation();
  return (
    <Container component="main" maxWidth="md" sx={{ py: { xs: 3, md: 5 }, px: { xs: 1, sm: 2, md: 3 } }}>
      <Typography variant="h1" sx={{ mb: 3 }}>
        {t('account.title')}
      </Typography>
      <Stack spacing={3}>
        <ProfileCard />
        <PasswordCard />
        <PasskeysCard Section={Section} />
        <SessionsCard />
        <DeleteCard />
      </Stack>
    </Container>
  );
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  const id = useId();
  return (
    <Card component="section" aria-labelledby={id} variant="outlined">
      <CardContent>
        <Typography id={id} variant="h2" sx={{ fontSize: '1.25rem', mb: 2 }}>
          {title}
        </Typography>
        {children}
      </CardContent>
    </Card>
  );
}

function ProfileCard() {
  const { t } = useTranslation();
  const account = useAccount();
  const update = useUpdateDisplayName();
  const resend = useMutation({ mutationFn: resendVerification, onSuccess: () => showSaved(t('account.sent', { email: account.data?.email ?? '' })) });
  const form = useForm({ resolver: zodResolver(updateAccountSchema), defaultValues: { displayName: '' }, mode: 'onTouched' });
  const { reset } = form;
  useEffect(() => {
    if (account.data) reset({ displayName: account.data.displayName ?? '' });
  }, [account.data, reset]);
  const onSubmit = form.handleSubmit(async ({ displayName }) => {
    await update.mutateAsync(displayName);
    setSessionValue('displayName', displayName);
    showSaved(t('account.nameSaved'));
  });
  return (
    <Section title={t('account.profile')}>
      <Box component="form" noValidate onSubmit={onSubmit} sx={{ display: 'flex', gap: 2, alignItems: 'flex-start', flexWrap: 'wrap' }}>
        <FormTextField control={form.control} name="displayName" label={t('auth.displayName')} sx={{ flex: '1 1 240px' }} />
        <Button type="submit" variant="contained" disabled={!form.formState.isDirty || form.formState.isSubmitting} sx={{ mt: 1 }}>
          {t('account.save')}
        </Button>
      </Box>
      {update.isError ? <Alert severity="error">{errorMessage(update.error)}</Alert> : null}
      <Box sx={{ mt: 2, display: 'flex', gap: 1, alignItems: 'center', flexWrap: 'wrap' }}>
        <Typography component="span" color="text.secondary">
          {t('auth.email')}:
        </Typography>
        <Typography component="span" sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>
          {account.data?.email}
        </Typography>
        {account.data ? (
          <Chip size="small" variant="outlined" label={account.data.emailVerified ? t('account.verified') : t('account.notVerified')} />
        ) : null}
        {account.data && !account.data.emailVerified ? (
          <Button size="small" onClick={() => resend.mutate()} disabled={resend.isPending}>
            {t('account.sendAgain')}
          </Button>
        ) : null}
      </Box>
    </Section>
  );
}

function PasswordCard() {
  const { t } = useTranslation();
  const [error, setError] = useState<string | null>(null);
  const form = useForm({ resolver: zodResolver(changePasswordSchema), defaultValues: { oldPassword: '', newPassword: '' }, mode: 'onTouched' });
  const newPassword = useWatch({ control: form.control, name: 'newPassword' });
  const account = useAccount();
  const onSubmit = form.handleSubmit(async (values) => {
    setError(null);
    try {
      await changePassword(values);
      form.reset();
      showSaved(t('account.passwordChanged'));
    } catch (e) {
      setError(errorMessage(e));
    }
  });
  return (
    <Section title={t('account.password')}>
      <Typography color="text.secondary" sx={{ mb: 1 }}>
        {t('account.passwordHint')}
      </Typography>
      <Box component="form" noValidate onSubmit={onSubmit} sx={{ display: 'grid', gap: 1, maxWidth: 420 }}>
        <FormTextField control={form.control} name="oldPassword" type="password" autoComplete="current-password" label={t('account.currentPassword')} />
        <FormTextField control={form.control} name="newPassword" type="password" autoComplete="new-password" label={t('recovery.newPassword')} />
        <PasswordStrengthHint password={newPassword} userInputs={[account.data?.email ?? '', account.data?.displayName ?? '']} />
        {error ? <Alert severity="error">{error}</Alert> : null}
        <Box>
          <Button type="submit" variant="contained" disabled={form.formState.isSubmitting}>
            {t('account.changePassword')}
          </Button>
        </Box>
      </Box>
    </Section>
  );
}

function SessionsCard() {
  const { t, i18n } = useTranslation();
  const sessions = useSessions();
  const end = useEndSession();
  const logout = useLogout();
  const [confirmAll, setConfirmAll] = useState(false);
  const label = (s: AccountSession) => {
    const { browser, system } = describeBrowser(s.userAgent);
    if (browser && system) return t('account.browserOn', { browser, system });
    return browser ?? system ?? t('account.unknownBrowser');
  };
  return (
    <Section title={t('account.sessions')}>
      {sessions.isError ? <Alert severity="error">{errorMessage(sessions.error)}</Alert> : null}
      <List disablePadding>
        {(sessions.data ?? []).map((s) => (
          <ListItem
            key={s.id}
            divider
            disableGutters
            secondaryAction={
              s.current ? (
                <Chip size="small" color="primary" label={t('account.thisBrowser')} />
              ) : (
                <Button size="small" color="error" disabled={end.isPending} onClick={() => end.mutate(s.id)} aria-label={t('account.endSessionOf', { name: label(s) })}>
                  {t('account.endSession')}
                </Button>
              )
            }
            sx={{ pr: 14 }}
          >
            <ListItemText
              primary={label(s)}
              secondary={`${t('account.lastUsed', { when: formatDateTime(s.lastUsedAt, i18n.language) })}${s.passkey ? ` · ${t('account.viaPasskey')}` : ''}`}
            />
          </ListItem>
        ))}
      </List>
      <Button sx={{ mt: 2 }} variant="outlined" color="error" onClick={() => setConfirmAll(true)}>
        {t('account.endAll')}
      </Button>
      <ConfirmDialog
        open={confirmAll}
        title={t('account.endAllTitle')}
        message={t('account.endAllText')}
        confirmLabel={t('account.endAll')}
        cancelLabel={t('account.cancel')}
        onCancel={() => setConfirmAll(false)}
        onConfirm={() => void logout({ everywhere: true })}
      />
    </Section>
  );
}

function DeleteCard() {
  const { t } = useTranslation();
  const logout = useLogout();
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setConfirm(false);
    try {
      await deleteAccount();
      await logout();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <Section title={t('account.delete')}>
      <Typography sx={{ mb: 2 }}>{t('account.deleteText')}</Typography>
      <Button variant="contained" color="error" onClick={() => setConfirm(true)}>
        {t('account.deleteAction')}
      </Button>
      <ConfirmDialog
        open={confirm}
        title={t('account.deleteTitle')}
        message={t('account.deleteConfirm')}
        confirmLabel={t('account.deleteAction')}
        cancelLabel={t('account.cancel')}
        onCancel={() => setConfirm(false)}
        onConfirm={() => void remove()}
      />
      <MessageDialog open={error !== null} tone="error" title={t('account.deleteRefused')} message={error ?? undefined} buttonLabel={t('common.done')} onClose={() => setError(null)} />
    </Section>
  );
}
