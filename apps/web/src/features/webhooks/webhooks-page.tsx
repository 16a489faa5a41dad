import { MAX_WEBHOOKS_PER_APPLICATION, type Webhook, type WebhookDelivery, type WebhookDeliveryEvent, type WebhookWithSecret } from '@latchkey/contract';
import {
  Alert,
  Box,
  Button,
  Chip,
  Paper,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams, useSearchParams } from 'react-router';
import { ConfirmDialog } from '../../components/ui/confirm-dialog';
import { PageLoader } from '../../components/ui/page-loader';
import { showSaved } from '../../components/ui/saved-notice';
import { stackedOnPhone } from '../../components/ui/stacked-table';
import { useLoadMore } from '../../components/ui/use-load-more';
import { formatDateTime, formatDateTimeSeconds } from '../../lib/dates';
import { errorMessage } from '../../lib/http';
import { localText } from '../../lib/server-text';
import { useDeleteWebhook, useDeliveries, useResendDelivery, useRotateWebhookSecret, useSendTestEvent, useWebhooks } from './api';
import { AddWebhookDialog, SecretDialog } from './webhook-dialogs';
import { RetryAlert } from '../../components/ui/retry-alert';

/** Query parameter naming the webhook whose delivery log is shown. */
const WEBHOOK_PARAM = 'webhook';
const eventKey = (event: WebhookDeliveryEvent) => `webhooks.eventNames.${event.replace('.', '_')}` as 'webhooks.eventNames.lock_unlocked';

/** What became of the test event just sent, as the delivery log (polled) tells it. */
function TestEventResult({ delivery }: { delivery: WebhookDelivery }) {
  const { t } = useTranslation();
  const reason = delivery.responseStatus !== null ? `HTTP ${delivery.responseStatus}` : delivery.error ? localText(delivery.error) : '';
  const [severity, text] =
    delivery.status === 'succeeded'
      ? (['success', t('webhooks.testDelivered', { status: `HTTP ${delivery.responseStatus ?? ''}`.trim() })] as const)
      : delivery.status === 'failed'
        ? (['error', t('webhooks.testFailed', { reason })] as const)
        : delivery.attempts > 0
          ? (['warning', t('webhooks.testNotDelivered', { reason })] as const)
          : (['info', t('webhooks.testQueued')] as const);
  return (
    <Alert severity={severity} role="status" sx={{ mb: 2, overflowWrap: 'anywhere' }}>
      {text}
    </Alert>
  );
}

function DeliveryLog({ appId, webhook }: { appId: string; webhook: Webhook }) {
  const { t, i18n } = useTranslation();
  const deliveries = useDeliveries(appId, webhook.id);
  const resend = useResendDelivery(appId, webhook.id);
  const sendTest = useSendTestEvent(appId, webhook.id);
  const items = deliveries.data?.pages.flatMap((p) => p.items) ?? [];
  // The test event as the log has it now (the answer to sending it until the log shows it).
  const testEvent = sendTest.data ? (items.find((d) => d.id === sendTest.data.id) ?? sendTest.data) : null;
  const { list, loadMore } = useLoadMore<HTMLTableSectionElement>(items.length, deliveries.fetchNextPage, deliveries.isFetchingNextPage);
  // Retrying and pending in the default colour: MUI's warning orange on white is below AA contrast.
  const colour = { succeeded: 'success', failed: 'error', retrying: 'default', pending: 'default' } as const;
  return (
    <Box component="section" aria-labelledby="delivery-log-title" sx={{ mt: 3 }}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ justifyContent: 'space-between', alignItems: { sm: 'center' }, mb: 1 }}>
        <Typography id="delivery-log-title" variant="h2" sx={{ overflowWrap: 'anywhere' }}>
          {t('webhooks.deliveriesOf', { url: webhook.url })}
        </Typography>
        <Button
          variant="outlined"
          sx={{ flexShrink: 0, alignSelf: { xs: 'flex-start', sm: 'auto' } }}
          aria-label={t('webhooks.sendTestOne', { url: webhook.url })}
          onClick={() => sendTest.mutate()}
          disabled={sendTest.isPending}
        >
          {t('webhooks.sendTest')}
        </Button>
      </Stack>
      {sendTest.isError && (
        <Alert severity="error" sx={{ mb: 2 }}>
          {errorMessage(sendTest.error)}
        </Alert>
      )}
      {testEvent && <TestEventResult delivery={testEvent} />}
      {deliveries.isPending && <PageLoader />}
      {deliveries.isError && (
        <RetryAlert
          error={deliveries.error}
          text={(message) => t('webhooks.deliveriesFailed', { message })}
          onRetry={() => void deliveries.refetch()}
        />
      )}
      {resend.isError && <Alert severity="error">{errorMessage(resend.error)}</Alert>}
      {deliveries.data && items.length === 0 && <Typography>{t('webhooks.noDeliveries')}</Typography>}
      {items.length > 0 && (
        <TableContainer>
          <Table size="small" aria-label={t('webhooks.deliveries')} sx={stackedOnPhone}>
            <TableHead>
              <TableRow>
                <TableCell>{t('webhooks.event')}</TableCell>
                <TableCell>{t('webhooks.status')}</TableCell>
                <TableCell>{t('webhooks.response')}</TableCell>
                <TableCell>{t('webhooks.attempts')}</TableCell>
                <TableCell>{t('webhooks.time')}</TableCell>
                <TableCell>{t('webhooks.actions')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody ref={list}>
              {items.map((d) => (
                <TableRow key={d.id}>
                  <TableCell>
                    <code>{d.eventType}</code>
                  </TableCell>
                  <TableCell data-caption={t('webhooks.status')}>
                    <Chip size="small" color={colour[d.status]} variant="outlined" label={t(`webhooks.statuses.${d.status}`)} />
                  </TableCell>
                  <TableCell sx={{ overflowWrap: 'anywhere' }} data-caption={t('webhooks.response')}>
                    {d.responseStatus ?? (d.error ? localText(d.error) : t('history.none'))}
                  </TableCell>
                  <TableCell data-caption={t('webhooks.attempts')}>{d.attempts}</TableCell>
                  {/* To the second, like the lock's activity: a burst of events would otherwise read as one time. */}
                  <TableCell data-caption={t('webhooks.time')}>{formatDateTimeSeconds(d.at, i18n.language)}</TableCell>
                  <TableCell sx={{ gridColumn: { xs: '1 / -1', sm: 'auto' } }}>
                    <Button size="small" onClick={() => resend.mutate(d.id, { onSuccess: () => showSaved(t('webhooks.resent')) })} aria-label={t('webhooks.resendOne', { event: d.eventType, time: formatDateTimeSeconds(d.at, i18n.language) })}>
                      {t('webhooks.resend')}
                    </Button>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
      )}
      {deliveries.hasNextPage && (
        <Button sx={{ mt: 2 }} variant="outlined" onClick={loadMore} aria-disabled={deliveries.isFetchingNextPage}>
          {t('webhooks.loadMoreDeliveries')}
        </Button>
      )}
    </Box>
  );
}

/**
 * The application's webhooks: endpoints with the events they receive, their signing secrets (shown once,
 * rotatable) and each one's delivery log with Resend. The chosen endpoint is in the URL.
 */
export function WebhooksPage() {
  const { t, i18n } = useTranslation();
  const { appId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const webhooks = useWebhooks(appId);
  const rotate = useRotateWebhookSecret(appId);
  const remove = useDeleteWebhook(appId);
  const [adding, setAdding] = useState(false);
  const [secret, setSecret] = useState<WebhookWithSecret | null>(null);
  const [confirming, setConfirming] = useState<{ action: 'rotate' | 'delete'; webhook: Webhook } | null>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const list = webhooks.data ?? [];
  // At the limit the server would refuse a new one only after the form is filled in: say so up front.
  const atLimit = list.length >= MAX_WEBHOOKS_PER_APPLICATION;
  const chosen = list.find((w) => w.id === params.get(WEBHOOK_PARAM)) ?? list[0] ?? null;

  const confirm = () => {
    if (!confirming) return;
    const { action, webhook } = confirming;
    setConfirming(null);
    if (action === 'rotate') rotate.mutate(webhook.id, { onSuccess: setSecret });
    // The confirmation gives focus back to the Delete button, which goes with its row: focus moves to Add.
    else
      remove.mutate(webhook.id, {
        onSuccess: () => {
          showSaved(t('webhooks.deleted'));
          addButton.current?.focus();
        },
      });
  };

  return (
    <Paper variant="outlined" sx={{ p: { xs: 2, sm: 3 } }}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ justifyContent: 'space-between', alignItems: { sm: 'center' }, mb: 1 }}>
        <Typography variant="h1">{t('webhooks.title')}</Typography>
        <Button ref={addButton} variant="contained" onClick={() => setAdding(true)} disabled={atLimit}>
          {t('webhooks.add')}
        </Button>
      </Stack>
      <Typography color="text.secondary" sx={{ mb: 2 }}>
        {t('webhooks.intro')}
      </Typography>
      {atLimit && (
        <Alert severity="info" sx={{ mb: 2 }}>
          {t('webhooks.atLimit', { max: MAX_WEBHOOKS_PER_APPLICATION })}
        </Alert>
      )}
      {webhooks.isPending && <PageLoader />}
      {webhooks.isError && (
        <RetryAlert
          error={webhooks.error}
          text={(message) => t('webhooks.loadFailed', { message })}
          onRetry={() => void webhooks.refetch()}
        />
      )}
      {(rotate.isError || remove.isError) && <Alert severity="error">{errorMessage(rotate.error ?? remove.error)}</Alert>}
      {webhooks.data && list.length === 0 && <Typography>{t('webhooks.empty')}</Typography>}
      {list.length > 0 && (
        <TableContainer>
          <Table aria-label={t('webhooks.title')} sx={stackedOnPhone}>
            <TableHead>
              <TableRow>
                <TableCell>{t('webhooks.url')}</TableCell>
                <TableCell>{t('webhooks.events')}</TableCell>
                <TableCell>{t('webhooks.created')}</TableCell>
                <TableCell>{t('webhooks.actions')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {list.map((w) => (
                <TableRow key={w.id} selected={w.id === chosen?.id}>
                  <TableCell sx={{ overflowWrap: 'anywhere' }}>{w.url}</TableCell>
                  <TableCell data-caption={t('webhooks.events')}>
                    <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.5 }}>
                      {w.events.map((e) => (
                        <Chip key={e} size="small" variant="outlined" label={t(eventKey(e))} />
                      ))}
                    </Box>
                  </TableCell>
                  <TableCell data-caption={t('webhooks.created')}>{formatDateTime(w.createdAt, i18n.language)}</TableCell>
                  <TableCell sx={{ gridColumn: { xs: '1 / -1', sm: 'auto' } }}>
                    <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1 }}>
                      <Button
                        size="small"
                        aria-current={w.id === chosen?.id ? 'true' : undefined}
                        aria-label={t('webhooks.showDeliveries', { url: w.url })}
                        onClick={() => setParams({ [WEBHOOK_PARAM]: w.id }, { replace: true })}
                      >
                        {t('webhooks.deliveries')}
                      </Button>
                      <Button size="small" aria-label={t('webhooks.rotateOne', { url: w.url })} onClick={() => setConfirming({ action: 'rotate', webhook: w })}>
                        {t('webhooks.rotate')}
                      </Button>
                      <Button size="small" color="error" aria-label={t('webhooks.deleteOne', { url: w.url })} onClick={() => setConfirming({ action: 'delete', webhook: w })}>
                        {t('webhooks.delete')}
                      </Button>
                    </Box>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
      )}
      {chosen && <DeliveryLog key={chosen.id} appId={appId} webhook={chosen} />}
      <AddWebhookDialog
        appId={appId}
        open={adding}
        onCancel={() => setAdding(false)}
        onCreated={(created) => {
          setAdding(false);
          setSecret(created);
          setParams({ [WEBHOOK_PARAM]: created.id }, { replace: true });
        }}
      />
      <SecretDialog webhook={secret} onClose={() => setSecret(null)} />
      <ConfirmDialog
        open={confirming !== null}
        title={confirming?.action === 'rotate' ? t('webhooks.rotateTitle') : t('webhooks.deleteTitle')}
        message={confirming?.action === 'rotate' ? t('webhooks.rotateText', { url: confirming.webhook.url }) : t('webhooks.deleteText', { url: confirming?.webhook.url ?? '' })}
        confirmLabel={confirming?.action === 'rotate' ? t('webhooks.rotate') : t('webhooks.delete')}
        cancelLabel={t('common.cancel')}
        destructive={confirming?.action !== 'rotate'}
        onConfirm={confirm}
        onCancel={() => setConfirming(null)}
      />
    </Paper>
  );
}
