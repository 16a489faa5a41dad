import { Alert, Link } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { usePortalConfig } from '../../lib/config';

/**
 * Under a dialog that asks for an emailed code: on a service without SMTP the email went to a file in its
 * data directory, and the account finds it in the Outbox instead — this application's (`outboxHref`, in a
 * new tab so the dialog stays open), or any of its applications'.
 */
export function EmailedCodeHint({ outboxHref }: { outboxHref?: string }) {
  const { t } = useTranslation();
  const config = usePortalConfig();
  if (config.data?.emailDelivery !== 'outbox') return null;
  return (
    <Alert severity="info" sx={{ mt: 1 }}>
      {outboxHref ? (
        <>
          {t('account.codeInOutbox')}{' '}
          {/* The theme's link blue is under 4.5:1 on the info alert's pale blue: the alert's own text colour is not. */}
          <Link href={outboxHref} target="_blank" rel="noopener" color="inherit">
            {t('account.openOutbox')}
          </Link>
        </>
      ) : (
        t('account.codeInAnyOutbox')
      )}
    </Alert>
  );
}
