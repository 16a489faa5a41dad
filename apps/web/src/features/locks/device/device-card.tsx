import { faLinkSlash, faPlug, faRotate } from '@fortawesome/free-solid-svg-icons';
import type { DeviceCreated, Lock } from '@latchkey/contract';
import { Alert, Box, Button, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { lazyPart } from '../../../components/ui/lazy-part';
import { PageLoader } from '../../../components/ui/page-loader';
import { RetryAlert } from '../../../components/ui/retry-alert';
import { SectionCard } from '../../../components/ui/section-card';
import { useOperation } from '../../../components/ui/use-operation';
import { formatTimeSeconds } from '../../../lib/dates';
import { useCreateDevice, useDeviceStatus, useUnbindDevice } from './api';
import { DeviceChip } from './device-chip';
import { DeviceStatusList } from './device-status-list';

/** Shown once a code is made: the page's first drawing needs none of its code. */
const ProvisioningSteps = lazyPart(() => import('./provisioning-steps').then((m) => m.ProvisioningSteps));
/** What a click on the card opens: the lock page fetches it once its cards are drawn. */
export const DEVICE_CARD_PARTS = [ProvisioningSteps];

/**
 * The lock's device. A sandbox lock says it is virtual and offers to connect a device: that makes a
 * one-time provisioning code, shown with the Raspberry Pi's commands until the device has used it. A bound
 * device shows whether it is online, when it was last seen, its firmware and lock state; it can be
 * replaced by a new one or unbound, each after confirming, since either cuts the device off at once.
 */
export function DeviceCard({ appId, lock }: { appId: string; lock: Lock }) {
  const { t, i18n } = useTranslation();
  const status = useDeviceStatus(appId, lock.id, lock);
  const create = useCreateDevice(appId, lock.id);
  const unbind = useUnbindDevice(appId, lock.id);
  const { run, dialogs } = useOperation();
  // The code is shown once: it lives here, in memory, and nowhere else.
  const [created, setCreated] = useState<DeviceCreated | null>(null);
  const [confirm, setConfirm] = useState<'replace' | 'unbind' | null>(null);
  // A sandbox lock has no device to read (useDeviceStatus does not ask): it is null, not loading.
  const device = lock.device === null && status.data === undefined ? null : status.data;
  // Once the device has used its code, the code is of no more use and is no longer shown.
  const code = created && !(device?.deviceId === created.deviceId && device.provisioned) ? created : null;

  const makeCode = async () => {
    const made = await run(() => create.mutateAsync(), { notice: t('device.created') });
    if (made.ok) setCreated(made.value);
  };
  // A device that is set up is replaced only after confirming; a code nobody has used yet simply is.
  const connect = () => (device?.provisioned ? setConfirm('replace') : void makeCode());
  const now = Date.now() / 1000;
  const codeWaits =
    device && !device.provisioned && device.codeExpiresAt !== null && device.codeExpiresAt > now;

  return (
    <SectionCard
      headingId="device-heading"
      title={t('device.title')}
      action={device !== undefined && <DeviceChip device={device} />}
    >
      {status.isPending && device === undefined && <PageLoader />}
      {status.isError && (
        <RetryAlert
          error={status.error}
          text={(message) => t('device.loadFailed', { message })}
          onRetry={() => void status.refetch()}
          sx={{ mt: 2 }}
        />
      )}
      {device === null && !code && (
        <>
          <Typography sx={{ mt: 1 }}>{t('device.virtualText')}</Typography>
          <Button variant="outlined" startIcon={<Icon icon={faPlug} />} onClick={connect} sx={{ mt: 2 }}>
            {t('device.connect')}
          </Button>
        </>
      )}
      {code && (
        <>
          <ProvisioningSteps created={code} onNewCode={connect} />
          <Typography color="text.secondary">{t('device.waitingForDevice')}</Typography>
        </>
      )}
      {device && !device.provisioned && !code && (
        <Alert
          severity={codeWaits ? 'info' : 'warning'}
          sx={{ mt: 2 }}
          action={
            <Button color="inherit" size="small" startIcon={<Icon icon={faRotate} />} onClick={connect}>
              {t('device.newCode')}
            </Button>
          }
        >
          {codeWaits && device.codeExpiresAt !== null
            ? t('device.waiting', { at: formatTimeSeconds(device.codeExpiresAt, i18n.language) })
            : t('device.expired')}
        </Alert>
      )}
      {device?.provisioned && <DeviceStatusList device={device} />}
      {device && (
        <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, mt: 2 }}>
          {device.provisioned && (
            <Button variant="outlined" startIcon={<Icon icon={faPlug} />} onClick={connect}>
              {t('device.connectNew')}
            </Button>
          )}
          <Button
            variant="outlined"
            color="error"
            startIcon={<Icon icon={faLinkSlash} />}
            onClick={() => setConfirm('unbind')}
          >
            {t('device.unbind')}
          </Button>
        </Box>
      )}
      <ConfirmDialog
        open={confirm === 'replace'}
        title={t('device.replaceTitle')}
        message={t('device.replaceText', { deviceId: device?.deviceId ?? '' })}
        confirmLabel={t('device.replace')}
        cancelLabel={t('common.cancel')}
        onCancel={() => setConfirm(null)}
        onConfirm={() => {
          setConfirm(null);
          void makeCode();
        }}
      />
      <ConfirmDialog
        open={confirm === 'unbind'}
        title={t('device.unbindTitle')}
        message={t('device.unbindText', { deviceId: device?.deviceId ?? '' })}
        confirmLabel={t('device.unbind')}
        cancelLabel={t('common.cancel')}
        onCancel={() => setConfirm(null)}
        onConfirm={async () => {
          setConfirm(null);
          const done = await run(() => unbind.mutateAsync(), { notice: t('device.unbound') });
          if (done.ok) setCreated(null);
        }}
      />
      {dialogs}
    </SectionCard>
  );
}
