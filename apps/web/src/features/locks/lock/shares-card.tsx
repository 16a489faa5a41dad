import { faShareNodes, faUserMinus } from '@fortawesome/free-solid-svg-icons';
import type { LockShare } from '@latchkey/contract';
import {
  Button,
  Chip,
  IconButton,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { lazyPart } from '../../../components/ui/lazy-part';
import { useOpenedOnce } from '../../../components/ui/use-opened-once';
import { PageLoader } from '../../../components/ui/page-loader';
import { SectionCard } from '../../../components/ui/section-card';
import { stackedOnPhone } from '../../../components/ui/stacked-table';
import { showSaved } from '../../../components/ui/saved-notice';
import { useOperation } from '../../../components/ui/use-operation';
import { useRevokeShare, useShares } from '../shares-api';
import { describeAccess } from './format';
import { RetryAlert } from '../../../components/ui/retry-alert';

const ShareDialog = lazyPart(() => import('./share-dialog').then((m) => m.ShareDialog));
/** What a click on the card opens: the lock page fetches it once its cards are drawn. */
export const SHARES_CARD_PARTS = [ShareDialog];

/** Who the lock is shared with, how and when; share to an email, revoke after confirming. */
export function SharesCard({ appId, lockId }: { appId: string; lockId: string }) {
  const { t, i18n } = useTranslation();
  const shares = useShares(appId, lockId);
  const revoke = useRevokeShare(appId, lockId);
  const [adding, setAdding] = useState(false);
  const addingOnce = useOpenedOnce(adding);
  const [revoking, setRevoking] = useState<LockShare | null>(null);
  const { run, dialogs } = useOperation();
  const who = (share: LockShare) => share.email ?? share.displayName ?? share.userId;

  return (
    <SectionCard
      headingId="shares-heading"
      title={t('shares.title')}
      action={
        <Button variant="outlined" startIcon={<Icon icon={faShareNodes} />} onClick={() => setAdding(true)}>
          {t('shares.addShare')}
        </Button>
      }
    >
      {shares.isPending && <PageLoader />}
      {shares.isError && (
        <RetryAlert error={shares.error} text={(message) => t('shares.loadFailed', { message })} sx={{ mt: 2 }} />
      )}
      {shares.data && shares.data.length === 0 && (
        <Typography color="text.secondary" sx={{ mt: 2 }}>
          {t('shares.empty')}
        </Typography>
      )}
      {shares.data && shares.data.length > 0 && (
        <TableContainer sx={{ mt: 1 }}>
          {/* On a phone each share is its user (and the revoke button) over its captioned role, status and access. */}
          <Table size="small" aria-labelledby="shares-heading" sx={stackedOnPhone}>
            <TableHead>
              <TableRow>
                <TableCell>{t('shares.user')}</TableCell>
                <TableCell>{t('shares.role')}</TableCell>
                <TableCell>{t('shares.access')}</TableCell>
                <TableCell>{t('shares.status')}</TableCell>
                <TableCell align="right">{t('locks.actions')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {shares.data.map((share) => (
                <TableRow key={share.userId}>
                  <TableCell sx={{ overflowWrap: 'anywhere', minWidth: 160 }}>{who(share)}</TableCell>
                  <TableCell data-caption={t('shares.role')}>{t(`shares.roles.${share.role}`)}</TableCell>
                  <TableCell data-caption={t('shares.access')} data-stack="full" sx={{ minWidth: 180 }}>
                    {describeAccess(share, t, i18n.language)}
                  </TableCell>
                  <TableCell data-caption={t('shares.status')}>
                    <Chip
                      size="small"
                      variant="outlined"
                      color={share.status === 'active' ? 'success' : 'default'}
                      label={t(`shares.statusValue.${share.status}`)}
                    />
                  </TableCell>
                  <TableCell align="right" data-actions>
                    <IconButton
                      aria-label={t('shares.revoke', { user: who(share) })}
                      onClick={() => setRevoking(share)}
                    >
                      <Icon icon={faUserMinus} />
                    </IconButton>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
      )}
      {addingOnce && (
        <ShareDialog
          appId={appId}
          lockId={lockId}
          open={adding}
          onCancel={() => setAdding(false)}
          onShared={(email) => {
            setAdding(false);
            showSaved(t('shares.shared', { email }));
          }}
        />
      )}
      <ConfirmDialog
        open={revoking !== null}
        title={t('shares.revokeConfirm')}
        message={revoking ? t('shares.revokeMessage', { user: who(revoking) }) : undefined}
        confirmLabel={t('shares.revokeButton')}
        cancelLabel={t('common.cancel')}
        onCancel={() => setRevoking(null)}
        onConfirm={() => {
          const userId = revoking?.userId ?? '';
          setRevoking(null);
          void run(() => revoke.mutateAsync(userId), { notice: t('shares.revoked') });
        }}
      />
      {dialogs}
    </SectionCard>
  );
}
