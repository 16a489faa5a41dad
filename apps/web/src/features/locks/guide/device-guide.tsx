import { faPlug } from '@fortawesome/free-solid-svg-icons';
import { DEFAULT_LOCK_NAME, type Application } from '@latchkey/contract';
import { Alert, Box, Button, Link, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useOutletContext } from 'react-router';
import { paths } from '../../../lib/paths';
import { CodeBlock } from '../../../components/ui/code-block';
import { StepTitle } from '../../../components/ui/guide-parts';
import { Icon } from '../../../components/ui/icon';
import { PageLoader } from '../../../components/ui/page-loader';
import { errorMessage } from '../../../lib/http';
import { useLocks } from '../api';
import { installCommand } from '../device/device-commands';
import { LoopbackNotice } from '../device/loopback-notice';
import { devicePackageUrl, usePlatformSetup } from '../device/platform-setup';

/**
 * Getting Started → Connect a real lock: wire a relay to a Raspberry Pi, make a provisioning code on a
 * lock's page, and run the device there. The code and the filled-in commands are on the lock's page; this
 * links to it (the application's first lock, as the backend guide uses).
 */
export function DeviceGuide() {
  const { t } = useTranslation();
  const app = useOutletContext<Application>();
  const locks = useLocks(app.applicationId);
  const setup = usePlatformSetup().data;
  if (locks.isPending) return <PageLoader />;
  if (locks.isError) return <Alert severity="error">{errorMessage(locks.error)}</Alert>;
  const lock = locks.data.find((l) => l.name === DEFAULT_LOCK_NAME) ?? locks.data[0];
  const toLocks = (
    <Link component={RouterLink} to={paths.appLocks(app.applicationId)}>
      {t('deviceGuide.toLocks')}
    </Link>
  );

  return (
    <>
      <LoopbackNotice sx={{ mt: 3 }} />
      <Box component="ol" sx={{ pl: { xs: 2.5, sm: 3 }, mt: 3, mb: 0, '& > li': { mb: 4, minWidth: 0 } }}>
        <li>
          <StepTitle>{t('deviceGuide.wireTitle')}</StepTitle>
          <Typography>{t('deviceGuide.wireText')}</Typography>
        </li>
        <li>
          <StepTitle>{t('deviceGuide.connectTitle')}</StepTitle>
          <Typography>{t('deviceGuide.connectText')}</Typography>
          {lock ? (
            <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 2, mt: 1.5 }}>
              <Button
                variant="outlined"
                component={RouterLink}
                to={paths.lock(app.applicationId, lock.id)}
                startIcon={<Icon icon={faPlug} />}
              >
                {t('gettingStarted.openLock', { lock: lock.name })}
              </Button>
              {toLocks}
            </Box>
          ) : (
            <Alert severity="warning" sx={{ mt: 1.5 }}>
              {t('deviceGuide.noLock')} {toLocks}
            </Alert>
          )}
        </li>
        <li>
          <StepTitle>{t('deviceGuide.runTitle')}</StepTitle>
          <Typography>{t('deviceGuide.runText')}</Typography>
          <CodeBlock
            code={installCommand(devicePackageUrl(setup))}
            label={t('device.commandLabel', { step: t('device.installTitle') })}
            copyable
          />
          {setup?.devicePackage && (
            <Typography variant="body2">
              {t('device.packageVersion', { version: setup.devicePackage.version })}
            </Typography>
          )}
          <Typography variant="body2" color="text.secondary">
            {t('deviceGuide.virtualText')}
          </Typography>
        </li>
      </Box>
    </>
  );
}
