import { Alert, Button } from '@mui/material';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { showSaved } from '../../components/ui/saved-notice';
import { configQuery } from '../../lib/config';
import { errorMessage } from '../../lib/http';
import { useAccount } from './account-query';

// The call's module comes with the click: it carries the contract's schemas of the other account calls, built
// when it is evaluated, which every signed-in page would otherwise build at its load for a banner's button.
const resendVerification = () => import('../../lib/trust-api').then((m) => m.resendVerification());

/** Until the account's email is verified: a banner with "Send again". */
export function VerifyEmailBanner() {
  const { t } = useTranslation();
  const account = useAccount();
  // Read from the cache only (the navigation guard loads it with the account): fetched here, it would arrive
  // after the banner and make it grow.
  const config = useQuery({ ...configQuery, enabled: false });
  const resend = useMutation({
    mutationFn: resendVerification,
    onSuccess: () => showSaved(t('account.sent', { email: account.data?.email ?? '' })),
  });
  if (!account.data || account.data.emailVerified) return null;
  return (
    <Alert
      severity="warning"
      role="region"
      aria-label={t('account.unverified', { email: account.data.email })}
      // The message wraps (a long address included) instead of scrolling: a scrolling region with nothing
      // focusable in it cannot be read with a keyboard. On a phone the button moves below the text.
      sx={{
        borderRadius: 0,
        flexWrap: 'wrap',
        '& .MuiAlert-message': { overflow: 'visible', minWidth: 0, flex: '1 1 12rem', overflowWrap: 'anywhere' },
        '& .MuiAlert-action': { ml: 'auto' },
      }}
      action={
        <Button color="inherit" size="small" disabled={resend.isPending} onClick={() => resend.mutate()}>
          {t('account.sendAgain')}
        </Button>
      }
    >
      {t('account.unverified', { email: account.data.email })}
      {config.data?.emailDelivery === 'outbox' ? ` ${t('account.linkInAnyOutbox')}` : null}
      {resend.isError ? ` — ${errorMessage(resend.error)}` : null}
    </Alert>
  );
}
