import { Alert, CircularProgress } from '@mui/material';
import { addRecoveryTexts } from './recovery-texts';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { paths } from '../../lib/paths';
import { errorMessage } from '../../lib/http';
import { getSession } from '../../lib/session';
import { verifyEmail } from '../../lib/trust-api';
import { useLinkSecrets } from '../../lib/use-link-secrets';
import { AuthPageFrame } from './auth-page-frame';

addRecoveryTexts();

const LINK = ['code'] as const;

/**
 * /verify-email#code= from the verification email (the fragment: never sent to a server): proves the address
 * (no sign-in needed, as in the SDK); the code goes to the API in the request's body.
 */
export function VerifyEmailPage() {
  const { t } = useTranslation();
  const { code } = useLinkSecrets(LINK);
  const [state, setState] = useState<{ done: boolean; error: string | null }>({ done: false, error: null });
  const sent = useRef(false);

  useEffect(() => {
    if (sent.current) return;
    sent.current = true;
    if (!code) return setState({ done: true, error: t('recovery.verifyIncomplete') });
    verifyEmail(code).then(
      () => setState({ done: true, error: null }),
      (e: unknown) => setState({ done: true, error: errorMessage(e) }),
    );
  }, [code, t]);

  const signedIn = getSession().token !== null;
  const next = signedIn ? paths.start : paths.login;
  return (
    <AuthPageFrame
      titleId="verify-title"
      title={t('recovery.verifyTitle')}
      link={{ to: next, label: signedIn ? t('recovery.verifyContinue') : t('recovery.backToLogin') }}
    >
      {!state.done ? (
        <CircularProgress aria-label={t('recovery.verifying')} />
      ) : state.error ? (
        <Alert severity="warning">{state.error}</Alert>
      ) : (
        <Alert severity="success" role="status">
          {t('recovery.verifyDone')}
        </Alert>
      )}
    </AuthPageFrame>
  );
}
