import { faPen, faPlus, faQrcode, faTrash } from '@fortawesome/free-solid-svg-icons';
import type { LockTile } from '@latchkey/contract';
import { Alert, Box, Button, IconButton, List, ListItem, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { lazyPart } from '../../../components/ui/lazy-part';
import { useOpenedOnce } from '../../../components/ui/use-opened-once';
import { SectionCard } from '../../../components/ui/section-card';
import { useOperation } from '../../../components/ui/use-operation';
import { errorMessage } from '../../../lib/http';
import { LockNameDialog } from '../list/lock-name-dialog';
import { useCreateTile, useDeleteTile, useLockTiles, useRenameTile } from './api';

const QrDialog = lazyPart(() => import('./qr-dialog').then((m) => m.QrDialog));
/** What a click on the card opens: the lock page fetches it once its cards are drawn. */
export const TILES_CARD_PARTS = [QrDialog];
// The rename dialog stays in the page's chunk (its form code is the settings card's too): a chunk of its own
// regrouped the contract's shared chunks, and /login's code grew past its limit.

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
  const renamingOnce = useOpenedOnce(renaming !== null);
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
      {renamingOnce && (
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
      )}
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
