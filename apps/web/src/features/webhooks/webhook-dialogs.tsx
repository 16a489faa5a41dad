import { zodResolver } from '@hookform/resolvers/zod';
import { createWebhookSchema, WEBHOOK_EVENTS, type CreateWebhook, type WebhookWithSecret } from '@latchkey/contract';
import {
  Alert,
  Button,
  Checkbox,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  FormControl,
  FormControlLabel,
  FormGroup,
  FormHelperText,
  FormLabel,
} from '@mui/material';
import { useEffect, useId, useState } from 'react';
import { Controller, useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { CopyValue } from '../../components/ui/copy-value';
import { FormTextField } from '../../components/ui/form-text-field';
import { ApiError, errorMessage } from '../../lib/http';
import { localText } from '../../lib/server-text';
import { useCreateWebhook } from './api';

interface AddProps {
  appId: string;
  open: boolean;
  onCancel: () => void;
  onCreated: (webhook: WebhookWithSecret) => void;
}

/**
 * Register an endpoint: its URL and the events it wants. The contract validates as you type; the server's
 * refusal of the URL (http, a private address, one the application already has …) goes under the field,
 * which keeps it and takes focus.
 */
export function AddWebhookDialog({ appId, open, onCancel, onCreated }: AddProps) {
  const { t } = useTranslation();
  const titleId = useId();
  const eventsErrorId = useId();
  const create = useCreateWebhook(appId);
  const form = useForm<CreateWebhook>({ resolver: zodResolver(createWebhookSchema), defaultValues: { url: '', events: [] }, mode: 'onTouched' });
  // A development service says which OUTBOUND_ALLOW host would let a refused localhost URL through.
  const [hint, setHint] = useState<{ host: string; url: string } | null>(null);
  const url = useWatch({ control: form.control, name: 'url' });
  const { reset } = form;
  const { reset: resetCreate } = create;
  useEffect(() => {
    if (open) {
      reset({ url: '', events: [] });
      resetCreate();
      setHint(null);
    }
  }, [open, reset, resetCreate]);

  return (
    <Dialog open={open} onClose={onCancel} aria-labelledby={titleId} fullWidth maxWidth="sm">
      <form
        noValidate
        onSubmit={(e) => {
          e.stopPropagation();
          void form.handleSubmit((input) =>
            create.mutate(input, {
              onSuccess: onCreated,
              onError: (error) => {
                const host = error instanceof ApiError ? error.hint?.outboundAllow : undefined;
                setHint(host === undefined ? null : { host, url: input.url });
                form.setError('url', { type: 'server', message: errorMessage(error) }, { shouldFocus: true });
              },
            }),
          )(e);
        }}
      >
        <DialogTitle id={titleId}>{t('webhooks.add')}</DialogTitle>
        <DialogContent>
          <FormTextField control={form.control} name="url" label={t('webhooks.url')} placeholder="https://api.example.com/latchkey/webhooks" required fullWidth margin="normal" type="url" autoFocus />
          {/* Until the URL it was given for is changed. */}
          {hint !== null && hint.url.trim() === url.trim() && (
            <Alert severity="info" sx={{ overflowWrap: 'anywhere' }}>
              {t('webhooks.outboundAllowHint', { host: hint.host })}
            </Alert>
          )}
          <Controller
            control={form.control}
            name="events"
            render={({ field, fieldState }) => (
              // The error is the group's description, and a refused submit focuses the first event.
              <FormControl component="fieldset" error={fieldState.error !== undefined} margin="normal" required aria-describedby={fieldState.error ? eventsErrorId : undefined}>
                <FormLabel component="legend">{t('webhooks.events')}</FormLabel>
                <FormGroup>
                  {WEBHOOK_EVENTS.map((event, i) => (
                    <FormControlLabel
                      key={event}
                      label={`${t(`webhooks.eventNames.${event.replace('.', '_') as 'lock_unlocked'}`)} (${event})`}
                      control={
                        <Checkbox
                          slotProps={{ input: { ref: i === 0 ? field.ref : undefined } }}
                          checked={field.value.includes(event)}
                          onChange={(e) => field.onChange(e.target.checked ? [...field.value, event] : field.value.filter((v) => v !== event))}
                          onBlur={field.onBlur}
                        />
                      }
                    />
                  ))}
                </FormGroup>
                {fieldState.error?.message && <FormHelperText id={eventsErrorId}>{localText(fieldState.error.message)}</FormHelperText>}
              </FormControl>
            )}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={onCancel}>{t('common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={create.isPending}>
            {t('webhooks.addConfirm')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

/**
 * The signing secret, shown this once (after registering or rotating), with a copy button. A tap beside
 * the dialog does not close it — the secret would be gone for good; Done or Escape does.
 */
export function SecretDialog({ webhook, onClose }: { webhook: WebhookWithSecret | null; onClose: () => void }) {
  const { t } = useTranslation();
  const titleId = useId();
  return (
    <Dialog open={webhook !== null} onClose={(_, reason) => reason !== 'backdropClick' && onClose()} aria-labelledby={titleId} fullWidth maxWidth="sm">
      <DialogTitle id={titleId}>{t('webhooks.secretTitle')}</DialogTitle>
      <DialogContent>
        <DialogContentText sx={{ mb: 2, overflowWrap: 'anywhere' }}>{t('webhooks.secretText', { url: webhook?.url ?? '' })}</DialogContentText>
        {webhook && <CopyValue value={webhook.secret} name={t('webhooks.secretName')} />}
        <Alert severity="warning" sx={{ mt: 2 }}>
          {t('webhooks.secretOnce')}
        </Alert>
      </DialogContent>
      <DialogActions>
        <Button variant="contained" onClick={onClose}>
          {t('webhooks.secretDone')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
