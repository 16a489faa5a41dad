import { faTriangleExclamation } from '@fortawesome/free-solid-svg-icons';
import type { PublicJwk } from '@latchkey/contract';
import { Alert, Box, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';
import { formatDate } from '../../../lib/dates';

type ExpiryState = 'valid' | 'expiring' | 'expired';

/**
 * An uploaded key's expiry (its JWK `exp`) beside its chip — 'Expired' once it has passed (the
 * platform no longer verifies with it), 'Expires soon' in the 14 days before. Words, not colour alone.
 */
export function KeyExpiryMark({ jwk, state, descriptionId }: { jwk: PublicJwk; state: ExpiryState; descriptionId?: string }) {
  const { t, i18n } = useTranslation();
  if (state === 'valid' || jwk.exp === undefined) return null;
  const expired = state === 'expired';
  const label = t(expired ? 'issuerKeys.expiredLabel' : 'issuerKeys.expiringLabel', { kid: jwk.kid, date: formatDate(jwk.exp, i18n.language) });
  return (
    <Typography
      component="span"
      variant="body2"
      title={label}
      // Amber text on white is too faint to read (WCAG AA): the words stay dark, the icon carries the amber.
      sx={{ color: expired ? 'error.main' : 'text.primary', fontWeight: 600, display: 'inline-flex', alignItems: 'center', gap: 0.5 }}
    >
      <Box component="span" sx={{ color: expired ? 'error.main' : 'warning.dark', display: 'inline-flex' }}>
        <Icon icon={faTriangleExclamation} />
      </Box>
      {t(expired ? 'issuerKeys.expired' : 'issuerKeys.expiring')}
      {/* The key's chip is described by this (a hidden element still gives a description). */}
      <span id={descriptionId} hidden>
        {label}
      </span>
    </Typography>
  );
}

/** One line per expired or soon-expiring key, above the chips: what happens and what to do. */
export function KeyExpiryWarnings({ keys, expiry }: { keys: PublicJwk[]; expiry: (key: PublicJwk) => ExpiryState }) {
  const { t, i18n } = useTranslation();
  const flagged = keys.filter((k) => k.exp !== undefined && expiry(k) !== 'valid');
  if (flagged.length === 0) return null;
  return (
    <Box sx={{ display: 'grid', gap: 1, mt: 1 }}>
      {flagged.map((key) => {
        const expired = expiry(key) === 'expired';
        const date = formatDate(key.exp!, i18n.language);
        return (
          <Alert key={key.kid} severity={expired ? 'error' : 'warning'}>
            {t(expired ? 'issuerKeys.expiredWarning' : 'issuerKeys.expiringWarning', { kid: key.kid, date })}
          </Alert>
        );
      })}
    </Box>
  );
}
