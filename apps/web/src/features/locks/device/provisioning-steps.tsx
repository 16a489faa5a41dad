import { faRotate } from '@fortawesome/free-solid-svg-icons';
import type { DeviceCreated } from '@latchkey/contract';
import { Alert, Box, Button, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { CodeBlock } from '../../../components/ui/code-block';
import { CopyValue } from '../../../components/ui/copy-value';
import { Icon } from '../../../components/ui/icon';
import { formatTimeSeconds } from '../../../lib/dates';
import { API_BASE } from '../../../lib/http';
import { deviceCommands } from './device-commands';
import { LoopbackNotice } from './loopback-notice';
import { devicePackageUrl, usePlatformSetup } from './platform-setup';
import { formatCountdown } from './format';
import { useNow } from './use-now';

interface Props {
  created: DeviceCreated;
  onNewCode: () => void;
}

/**
 * The one-time provisioning code, with a copy button and its countdown, then the Raspberry Pi's commands
 * with the code in them: install (the device package this platform serves, with its version), provision
 * against PUBLIC_URL's API, run. Once it has expired, a new one is offered instead. When PUBLIC_URL is a
 * loopback address the Pi cannot reach, the notice beside the commands says so and how to change it.
 */
export function ProvisioningSteps({ created, onNewCode }: Props) {
  const { t, i18n } = useTranslation();
  const now = useNow(1000);
  const left = created.expiresAt - now / 1000;
  const setup = usePlatformSetup().data;
  const commands = deviceCommands(
    `${setup?.publicUrl ?? window.location.origin}${API_BASE}`,
    created.provisioningCode,
    devicePackageUrl(setup),
  );
  const label = (step: string) => t('device.commandLabel', { step });

  return (
    <Box sx={{ mt: 2 }}>
      <Typography variant="h3" component="h3" sx={{ mb: 1 }}>
        {t('device.code')}
      </Typography>
      <Typography component="div" sx={{ fontSize: '1.25rem', fontWeight: 600, overflowWrap: 'anywhere' }}>
        <CopyValue value={created.provisioningCode} name={t('device.code')} />
      </Typography>
      {left > 0 ? (
        <Typography variant="body2" color="text.secondary" sx={{ fontVariantNumeric: 'tabular-nums' }}>
          {t('device.codeOnce')}{' '}
          {t('device.expiresIn', {
            time: formatCountdown(left),
            at: formatTimeSeconds(created.expiresAt, i18n.language),
          })}
        </Typography>
      ) : (
        <Alert
          severity="warning"
          sx={{ mt: 1 }}
          action={
            <Button color="inherit" size="small" startIcon={<Icon icon={faRotate} />} onClick={onNewCode}>
              {t('device.newCode')}
            </Button>
          }
        >
          {t('device.expired')}
        </Alert>
      )}
      <Typography variant="h3" component="h3" sx={{ mt: 3, mb: 1 }}>
        {t('device.setupTitle')}
      </Typography>
      <LoopbackNotice sx={{ mb: 2 }} />
      <Box component="ol" sx={{ pl: { xs: 2.5, sm: 3 }, m: 0, '& > li': { mb: 2, minWidth: 0 } }}>
        <li>
          <Typography sx={{ fontWeight: 600 }}>{t('device.installTitle')}</Typography>
          {setup && (
            <Typography variant="body2">
              {setup.devicePackage
                ? t('device.packageVersion', { version: setup.devicePackage.version })
                : t('device.packageNotBuilt')}
            </Typography>
          )}
          <CodeBlock code={commands.install} label={label(t('device.installTitle'))} copyable />
        </li>
        <li>
          <Typography sx={{ fontWeight: 600 }}>{t('device.provisionTitle')}</Typography>
          <Typography variant="body2">{t('device.provisionText')}</Typography>
          <CodeBlock code={commands.provision} label={label(t('device.provisionTitle'))} copyable />
        </li>
        <li>
          <Typography sx={{ fontWeight: 600 }}>{t('device.runTitle')}</Typography>
          <Typography variant="body2">{t('device.runText')}</Typography>
          <CodeBlock code={commands.run} label={label(t('device.runTitle'))} copyable />
        </li>
      </Box>
    </Box>
  );
}
