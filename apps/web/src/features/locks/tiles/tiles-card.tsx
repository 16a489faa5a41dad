import { faPen, faPlus, faQrcode, faTrash } from '@fortawesome/free-solid-svg-icons';
import type { LockTile } from '@latchkey/contract';
import {
  Alert,
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  Link,
  List,
  ListItem,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { SectionCard } from '../../../components/ui/section-card';
import { useOperation } from '../../../components/ui/use-operation';
import { errorMessage } from '../../../lib/http';
import { LockNameDialog } from '../list/lock-name-dialog';
import { useCreateTile, useDeleteTile, useLockTiles, useRenameTile, useTileQr } from './api';
import { LoopbackNotice } from '../device/loopback-notice';

/** The tile's printable QR code for its short URL, drawn by the server. */
function QrDialog({
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

/** A lock's tiles (the NFC sticker or printed QR code at its door): list, make a new one, its QR code, remove. */
export function TilesCard({ appId, lockId }: { appId: string; lockId: string }) {
  const { t } = useTranslation();
  const tiles = useLockTiles(appId, lockId);
  const create = useCreateTile(appId, lockId);
  const remove = useDeleteTile(appId, lockId);
  const rename = useRenameTile(appId, lockId);
  const { run, dialogs } = useOperation();
  const [showing, setShowing] = useState<LockTile | null>(null);
  const [removing, setRemoving] = useState<LockTile | null>(null);
  const [renaming, setRenaming] = useState<LockTile | null>(null);
  // A tile is called by its name; an unnamed one by the start of its id.
  const short = (tile: LockTile) => tile.name ?? tile.tileId.slice(0, 8);

  return (
    <SectionCard
      headingId="tiles-heading"
      title={t('tiles.title')}
      action={
        <Button
          variant="outlined"
          startIcon={<Icon icon={faPlus} />}
          onClick={async () => {
            const made = await run(() => create.mutateAsync(), { notice: t('tiles.created') });
            if (made.ok) setShowing(made.value);
          }}
        >
          {t('tiles.add')}
        </Button>
      }
    >
      <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
        {t('tiles.intro')}
      </Typography>
      {tiles.isError && (
        <Alert severity="error" sx={{ mt: 2 }}>
          {errorMessage(tiles.error)}
        </Alert>
      )}
      {tiles.data?.length === 0 && <Typography sx={{ mt: 2 }}>{t('tiles.none')}</Typography>}
      {tiles.data && tiles.data.length > 0 && (
        <List aria-label={t('tiles.title')} sx={{ mt: 1 }}>
          {tiles.data.map((tile) => (
            <ListItem key={tile.tileId} divider sx={{ flexWrap: 'wrap', gap: 1, px: 0 }}>
              <Box sx={{ minWidth: 0, flex: '1 1 12rem' }}>
                <Typography sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>
                  {tile.name ?? t('tiles.unnamed')}
                </Typography>
                <Typography variant="body2" color="text.secondary" sx={{ fontFamily: 'monospace', overflowWrap: 'anywhere' }}>
                  {tile.tileId}
                </Typography>
                {tile.otherLockIds.length > 0 && (
                  <Typography variant="body2" color="text.secondary">
                    {t('tiles.otherLocks', { count: tile.otherLockIds.length })}
                  </Typography>
                )}
              </Box>
              {/* The actions side by side at the row's end (a secondary action sat over the QR button). */}
              <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, ml: 'auto' }}>
                <Button
                  size="small"
                  startIcon={<Icon icon={faQrcode} />}
                  onClick={() => setShowing(tile)}
                  aria-label={t('tiles.showQrOne', { id: short(tile) })}
                >
                  {t('tiles.showQr')}
                </Button>
                <IconButton aria-label={t('tiles.renameOne', { id: short(tile) })} onClick={() => setRenaming(tile)}>
                  <Icon icon={faPen} />
                </IconButton>
                <IconButton
                  aria-label={t('tiles.removeOne', { id: short(tile) })}
                  onClick={() => setRemoving(tile)}
                >
                  <Icon icon={faTrash} />
                </IconButton>
              </Box>
            </ListItem>
          ))}
        </List>
      )}
      {showing && <QrDialog appId={appId} lockId={lockId} tile={showing} onClose={() => setShowing(null)} />}
      <LockNameDialog
        open={renaming !== null}
        title={t('tiles.renameTitle')}
        initialName={renaming?.name ?? ''}
        submitLabel={t('tiles.save')}
        label={t('tiles.name')}
        onCancel={() => setRenaming(null)}
        onSubmit={async (name) => {
          const result = await run(() => rename.mutateAsync({ tileId: renaming!.tileId, name }), { notice: true, inPlace: () => true });
          if (!result.ok) return result.message;
          setRenaming(null);
          return null;
        }}
      />
      <ConfirmDialog
        open={removing !== null}
        title={t('tiles.removeTitle')}
        message={t('tiles.removeText')}
        confirmLabel={t('tiles.remove')}
        cancelLabel={t('common.cancel')}
        destructive
        onCancel={() => setRemoving(null)}
        onConfirm={async () => {
          const tile = removing!;
          setRemoving(null);
          await run(() => remove.mutateAsync(tile.tileId), { notice: t('tiles.removed') });
        }}
      />
      {dialogs}
    </SectionCard>
  );
}
