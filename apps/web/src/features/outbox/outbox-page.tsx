import type { SentEmail } from '@latchkey/contract';
import {
  Alert,
  Box,
  Chip,
  List,
  ListItem,
  ListItemButton,
  ListItemText,
  Paper,
  Typography,
} from '@mui/material';
import { useTranslation } from 'react-i18next';
import { useParams, useSearchParams } from 'react-router';
import { OUTBOX_EMAIL_PARAM } from '../../lib/paths';
import { PageLoader } from '../../components/ui/page-loader';
import { ScaledEmailFrame } from '../../components/ui/scaled-email-frame';
import { formatDateTimeSeconds } from '../../lib/dates';
import { errorMessage } from '../../lib/http';
import { useOutbox, useOutboxHtml } from './api';
import { RetryAlert } from '../../components/ui/retry-alert';


/** What kind of email, in words; an unknown kind is shown as the server named it. */
function useKindLabel() {
  const { t, i18n } = useTranslation();
  return (kind: string) => {
    const key = `outbox.kinds.${kind}`;
    return i18n.exists(key) ? String(t(key as never)) : kind;
  };
}

/**
 * One sent email as it was rendered, in the scaled email frame the previews use (no `allow-scripts`, and
 * the portal's CSP forbids inline script besides): on a phone it is scaled to the width there is.
 */
function EmailFrame({ appId, email }: { appId: string; email: SentEmail }) {
  const { t } = useTranslation();
  const html = useOutboxHtml(appId, email.id);
  if (html.isPending) return <PageLoader />;
  if (html.isError) return <Alert severity="error">{errorMessage(html.error)}</Alert>;
  return <ScaledEmailFrame title={t('outbox.preview', { subject: email.subject })} srcDoc={html.data} />;
}

/** The sandbox Outbox: every email the platform sent for this application; the chosen one is in the URL. */
export function OutboxPage() {
  const { t, i18n } = useTranslation();
  const { appId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const outbox = useOutbox(appId);
  const kindLabel = useKindLabel();
  const emails = outbox.data ?? [];
  const chosenId = params.get(OUTBOX_EMAIL_PARAM) ?? emails[0]?.id ?? null;
  const chosen = emails.find((e) => e.id === chosenId) ?? null;

  return (
    <Paper variant="outlined" sx={{ p: { xs: 2, sm: 3 } }}>
      <Typography variant="h1" sx={{ mb: 1 }}>
        {t('outbox.title')}
      </Typography>
      <Typography color="text.secondary" sx={{ mb: 1 }}>
        {t('outbox.intro')}
      </Typography>
      {/* A subject stays in the language it was sent in: an English subject on a German page is expected. */}
      <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
        {t('outbox.asSent')}
      </Typography>
      {outbox.isPending && <PageLoader />}
      {outbox.isError && (
        <RetryAlert
          error={outbox.error}
          text={(message) => t('outbox.loadFailed', { message })}
          onRetry={() => void outbox.refetch()}
        />
      )}
      {outbox.data && emails.length === 0 && <Typography>{t('outbox.empty')}</Typography>}
      {emails.length > 0 && (
        <Box
          sx={{
            display: 'grid',
            gap: 3,
            gridTemplateColumns: { xs: 'minmax(0, 1fr)', lg: 'minmax(0, 1fr) auto' },
            alignItems: 'start',
          }}
        >
          <List
            aria-label={t('outbox.emails')}
            sx={{ border: 1, borderColor: 'grey.300', borderRadius: 1, py: 0 }}
          >
            {emails.map((email) => (
              <ListItem key={email.id} disablePadding divider>
                <ListItemButton
                  selected={email.id === chosen?.id}
                  aria-current={email.id === chosen?.id ? 'true' : undefined}
                  aria-label={t('outbox.show', { to: email.to, subject: email.subject })}
                  onClick={() => setParams({ [OUTBOX_EMAIL_PARAM]: email.id }, { replace: true })}
                >
                  <ListItemText
                    primary={email.subject}
                    secondary={
                      <Box
                        component="span"
                        sx={{
                          display: 'flex',
                          flexWrap: 'wrap',
                          columnGap: 1.5,
                          alignItems: 'center',
                          overflowWrap: 'anywhere',
                        }}
                      >
                        <span>{email.to}</span>
                        <span>{formatDateTimeSeconds(email.createdAt, i18n.language)}</span>
                        <Chip
                          component="span"
                          size="small"
                          variant="outlined"
                          label={kindLabel(email.kind)}
                        />
                      </Box>
                    }
                  />
                </ListItemButton>
              </ListItem>
            ))}
          </List>
          {chosen ? (
            <EmailFrame appId={appId} email={chosen} />
          ) : (
            <Typography>{t('outbox.choose')}</Typography>
          )}
        </Box>
      )}
    </Paper>
  );
}
