import type { LockTile } from '@latchkey/contract';
import { Alert, Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Link, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../../lib/http';
import { LoopbackNotice } from '../device/loopback-notice';
import { useTileQr } from './api';

/** The tile's printable QR code for its short URL, drawn by the server. */
export function QrDialog({
  appId,
  lockId,
  tile,
  onClose,
}: {
  appId: string;
  lockId: string;
  tile: LockTile;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const qr = useTileQr(appId, lockId, tile.tileId);
  return (
    <Dialog open onClose={onClose} aria-labelledby="tile-qr-title" fullWidth maxWidth="xs">
      <DialogTitle id="tile-qr-title">{t('tiles.qrTitle')}</DialogTitle>
      <DialogContent>
        {qr.isError && <Alert severity="error">{errorMessage(qr.error)}</Alert>}
        {/* A phone scanning the code must reach PUBLIC_URL: says so when it is a loopback address. */}
        <LoopbackNotice broker={false} sx={{ mb: 2 }} />
        {qr.data && (
          <Box
            component="img"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(qr.data)}`}
            alt={t('tiles.qrAlt', { url: tile.url })}
            sx={{ display: 'block', width: '100%', maxWidth: 280, mx: 'auto', bgcolor: '#fff' }}
          />
        )}
        <Typography variant="body2" sx={{ mt: 2, overflowWrap: 'anywhere', textAlign: 'center' }}>
          <Link href={tile.url} target="_blank" rel="noopener">
            {tile.url}
          </Link>
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
          {t('tiles.qrHelp')}
        </Typography>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => window.print()}>{t('tiles.print')}</Button>
        <Button variant="contained" onClick={onClose}>
          {t('common.done')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
