import { faPen, faPlus, faTrash } from '@fortawesome/free-solid-svg-icons';
import type { Lock, OwnerSite } from '@latchkey/contract';
import { Alert, Box, Button, IconButton, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { SectionCard } from '../../../components/ui/section-card';
import { useOperation } from '../../../components/ui/use-operation';
import { errorMessage } from '../../../lib/http';
import { LockNameDialog } from '../list/lock-name-dialog';
import { useCreateSite, useDeleteSite, useMoveLock, useRenameSite, useSites } from './api';

type Dialog =
  { kind: 'add' } | { kind: 'rename'; site: OwnerSite } | { kind: 'remove'; site: OwnerSite } | null;

/** The application's sites (its buildings): add, rename, remove, and which site each lock is in. */
export function SitesCard({ appId, locks }: { appId: string; locks: Lock[] }) {
  const { t } = useTranslation();
  const sites = useSites(appId);
  const create = useCreateSite(appId);
  const rename = useRenameSite(appId);
  const remove = useDeleteSite(appId);
  const move = useMoveLock(appId);
  const { run, dialogs } = useOperation();
  const [dialog, setDialog] = useState<Dialog>(null);
  const siteOf = (lockId: string) => sites.data?.find((s) => s.lockIds.includes(lockId))?.id ?? '';
  const inPlace = () => true;

  return (
    <SectionCard
      headingId="sites-heading"
      title={t('sites.title')}
      action={
        <Button variant="outlined" startIcon={<Icon icon={faPlus} />} onClick={() => setDialog({ kind: 'add' })}>
          {t('sites.add')}
        </Button>
      }
    >
      <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
        {t('sites.intro')}
      </Typography>
      {sites.isError && (
        <Alert severity="error" sx={{ mt: 2 }}>
          {errorMessage(sites.error)}
        </Alert>
      )}
      {sites.data?.length === 0 && <Typography sx={{ mt: 2 }}>{t('sites.none')}</Typography>}
      {sites.data && sites.data.length > 0 && (
        <>
          <Box
            component="ul"
            aria-label={t('sites.title')}
            sx={{ listStyle: 'none', p: 0, m: 0, mt: 2, display: 'grid', gap: 1 }}
          >
            {sites.data.map((site) => (
              <Box
                component="li"
                key={site.id}
                sx={{ display: 'flex', alignItems: 'center', gap: 1, flexWrap: 'wrap' }}
              >
                <Typography sx={{ fontWeight: 600, overflowWrap: 'anywhere', minWidth: 0, flex: '1 1 8rem' }}>
                  {site.name}
                </Typography>
                <Typography variant="body2" color="text.secondary">
                  {t('sites.lockCount', { count: site.lockIds.length })}
                </Typography>
                <IconButton
                  aria-label={t('sites.renameOne', { name: site.name })}
                  onClick={() => setDialog({ kind: 'rename', site })}
                >
                  <Icon icon={faPen} />
                </IconButton>
                <IconButton
                  aria-label={t('sites.removeOne', { name: site.name })}
                  onClick={() => setDialog({ kind: 'remove', site })}
                >
                  <Icon icon={faTrash} />
                </IconButton>
              </Box>
            ))}
          </Box>
          <Typography variant="h3" sx={{ mt: 3, mb: 1, fontSize: '1rem', fontWeight: 600 }}>
            {t('sites.whichSite')}
          </Typography>
          <Box
            sx={{
              display: 'grid',
              gap: 2,
              gridTemplateColumns: { xs: 'minmax(0, 1fr)', sm: 'repeat(auto-fill, minmax(16rem, 1fr))' },
            }}
          >
            {locks.map((lock) => (
              <TextField
                key={lock.id}
                select
                size="small"
                label={lock.name}
                // A native select always shows its chosen option ("No site" too): the label sits above it,
                // never over it.
                slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
                value={siteOf(lock.id)}
                onChange={(e) =>
                  void run(() => move.mutateAsync({ lockId: lock.id, siteId: e.target.value || null }), {
                    notice: true,
                  })
                }
              >
                <option value="">{t('sites.noSite')}</option>
                {sites.data.map((site) => (
                  <option key={site.id} value={site.id}>
                    {site.name}
                  </option>
                ))}
              </TextField>
            ))}
          </Box>
        </>
      )}
      <LockNameDialog
        open={dialog?.kind === 'add' || dialog?.kind === 'rename'}
        title={dialog?.kind === 'rename' ? t('sites.renameTitle') : t('sites.addTitle')}
        initialName={dialog?.kind === 'rename' ? dialog.site.name : ''}
        submitLabel={dialog?.kind === 'rename' ? t('sites.save') : t('sites.add')}
        label={t('sites.name')}
        onCancel={() => setDialog(null)}
        onSubmit={async (name) => {
          const result =
            dialog?.kind === 'rename'
              ? await run(() => rename.mutateAsync({ siteId: dialog.site.id, name }), {
                  notice: true,
                  inPlace,
                })
              : await run(() => create.mutateAsync(name), { notice: t('sites.created'), inPlace });
          if (!result.ok) return result.message;
          setDialog(null);
          return null;
        }}
      />
      <ConfirmDialog
        open={dialog?.kind === 'remove'}
        title={t('sites.removeTitle')}
        message={dialog?.kind === 'remove' ? t('sites.removeText', { name: dialog.site.name }) : undefined}
        confirmLabel={t('sites.remove')}
        cancelLabel={t('common.cancel')}
        destructive
        onCancel={() => setDialog(null)}
        onConfirm={async () => {
          if (dialog?.kind !== 'remove') return;
          const site = dialog.site;
          setDialog(null);
          await run(() => remove.mutateAsync(site.id), { notice: t('sites.removed') });
        }}
      />
      {dialogs}
    </SectionCard>
  );
}
