import { Alert, AlertTitle, Typography, type SxProps, type Theme } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { CodeBlock } from '../../../components/ui/code-block';
import { publicUrlCommands, usePlatformSetup } from './platform-setup';

/**
 * Where the portal hands a URL to another machine (a device's commands, a tile's QR code): when PUBLIC_URL,
 * or the broker URL devices are given, is a loopback address, it says so and shows how to restart with a
 * PUBLIC_URL of this machine's network addresses. Nothing when they are reachable. `broker={false}` where
 * no device is involved (a tile's QR code): PUBLIC_URL alone.
 */
export function LoopbackNotice({
  sx,
  broker = true,
}: {
  sx?: SxProps<Theme>;
  /** Also the broker URL (a device's commands). */ broker?: boolean;
}) {
  const { t } = useTranslation();
  const setup = usePlatformSetup().data;
  if (!setup || (!setup.publicUrlIsLoopback && !(broker && setup.brokerUrlIsLoopback))) return null;
  if (!setup.publicUrlIsLoopback) {
    return (
      <Alert severity="warning" sx={sx}>
        {t('device.loopbackBroker', { url: setup.brokerUrl })}
      </Alert>
    );
  }
  const commands = publicUrlCommands(setup);
  const example =
    commands.length > 0
      ? commands
      : [publicUrlCommands({ publicUrl: setup.publicUrl, networkAddresses: ['latchkey.example.com'] })[0]!];
  return (
    <Alert severity="warning" sx={{ '& .MuiAlert-message': { minWidth: 0, flex: 1 }, ...sx }}>
      <AlertTitle>{t('device.loopbackTitle', { url: setup.publicUrl })}</AlertTitle>
      <Typography variant="body2">
        {t(commands.length > 0 ? 'device.loopbackText' : 'device.loopbackNoAddress', {
          url: setup.publicUrl,
        })}
      </Typography>
      {example.map((command) => (
        <CodeBlock
          key={command}
          code={command}
          label={`${t('device.loopbackCommandLabel')}: ${command.split(' ')[0]!.slice('PUBLIC_URL='.length)}`}
          copyable
        />
      ))}
    </Alert>
  );
}
