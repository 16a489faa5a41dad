import { faEllipsisVertical, faPlus } from '@fortawesome/free-solid-svg-icons';
import type { Lock } from '@latchkey/contract';
import {
  Box,
  Button,
  IconButton,
  Link,
  Menu,
  MenuItem,
  Paper,
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
import { Link as RouterLink, useParams } from 'react-router';
import { paths } from '../../../lib/paths';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { PageLoader } from '../../../components/ui/page-loader';
import { HeadingRow } from '../../../components/ui/section-card';
import { useOperation } from '../../../components/ui/use-operation';
import { fieldMessage } from '../../../lib/field-errors';
import { useCreateLock, useDeleteLock, useLocks, useUpdateLock } from '../api';
import { useLockEvents } from '../live-events';
import { LiveStatusBadge } from '../live-status';
import { LockStateChip } from '../lock-state';
import { DeviceChip } from '../device/device-chip';
import { LockNameDialog } from './lock-name-dialog';
import { SitesCard } from '../sites/sites-card';
import { CsvButton } from '../csv/csv-button';
import { applicationCsvPath } from '../csv/csv-paths';
import { RetryAlert } from '../../../components/ui/retry-alert';

type Dialog = { kind: 'add' } | { kind: 'rename'; lock: Lock } | { kind: 'remove'; lock: Lock } | null;

/** The application's locks with their live state and device; add, rename and remove. */
export function LocksPage() {
  const { t } = useTranslation();
  const { appId = '' } = useParams();
  const locks = useLocks(appId);
  const live = useLockEvents(appId);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [menu, setMenu] = useState<{ anchor: HTMLElement; lock: Lock } | null>(null);
  const create = useCreateLock(appId);
  const rename = useUpdateLock(appId);
  const remove = useDeleteLock(appId);
  const { run, dialogs } = useOperation();

  const close = () => setDialog(null);
  const pick = (kind: 'rename' | 'remove') => {
    const lock = menu?.lock;
    setMenu(null);
    if (lock) setDialog({ kind, lock });
  };

  return (
    <Box sx={{ display: 'grid', gridTemplateColumns: 'minmax(0, 1fr)', gap: { xs: 2, md: 3 } }}>
      <Paper variant="outlined" sx={{ p: { xs: 2, sm: 3 } }}>
        <HeadingRow gap={2} mb={1}>
          <Typography variant="h1">{t('locks.title')}</Typography>
          <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center' }}>
            {/* Every lock's activity in one file, for an auditor. */}
            <CsvButton path={applicationCsvPath(appId, {})} fileName={`activity-${appId}.csv`} label={t('activityDetails.downloadAllCsv')} />
            <Button
              variant="contained"
              startIcon={<Icon icon={faPlus} />}
              onClick={() => setDialog({ kind: 'add' })}
            >
              {t('locks.addLock')}
            </Button>
          </Box>
        </HeadingRow>
        <Typography color="text.secondary" sx={{ mb: 1 }}>
          {t('locks.intro')}
        </Typography>
        <LiveStatusBadge status={live} />
        {locks.isPending && <PageLoader />}
        {locks.isError && (
          <RetryAlert
            error={locks.error}
            text={(message) => t('locks.loadFailed', { message })}
            onRetry={() => void locks.refetch()}
            sx={{ mt: 2 }}
          />
        )}
        {locks.data && (
          <LocksTable
            appId={appId}
            locks={locks.data}
            menuOpenFor={menu?.lock.id}
            onActions={(anchor, lock) => setMenu({ anchor, lock })}
          />
        )}
        <Menu anchorEl={menu?.anchor} open={menu !== null} onClose={() => setMenu(null)}>
          <MenuItem onClick={() => pick('rename')}>{t('locks.rename')}</MenuItem>
          <MenuItem onClick={() => pick('remove')}>{t('locks.remove')}</MenuItem>
        </Menu>
        <LockNameDialog
          open={dialog?.kind === 'add' || dialog?.kind === 'rename'}
          title={dialog?.kind === 'rename' ? t('locks.renameLock') : t('locks.addLock')}
          initialName={dialog?.kind === 'rename' ? dialog.lock.name : ''}
          submitLabel={dialog?.kind === 'rename' ? t('common.save') : t('common.add')}
          onCancel={close}
          onSubmit={async (name) => {
            // The dialog closes once the server took the name; a refusal stays in it, under the field.
            const result =
              dialog?.kind === 'rename'
                ? await run(() => rename.mutateAsync({ lockId: dialog.lock.id, body: { name } }), {
                    notice: true,
                    inPlace: () => true,
                  })
                : await run(() => create.mutateAsync({ name }), {
                    notice: t('locks.lockAdded', { name }),
                    inPlace: () => true,
                  });
            if (!result.ok) return fieldMessage(result.error, 'name') ?? result.message;
            close();
            return null;
          }}
        />
        <ConfirmDialog
          open={dialog?.kind === 'remove'}
          title={t('locks.removeConfirm')}
          message={
            dialog?.kind === 'remove' ? t('locks.removeMessage', { name: dialog.lock.name }) : undefined
          }
          confirmLabel={t('common.remove')}
          cancelLabel={t('common.cancel')}
          onCancel={close}
          onConfirm={() => {
            const lockId = dialog?.kind === 'remove' ? dialog.lock.id : '';
            close();
            void run(() => remove.mutateAsync(lockId), { notice: t('common.removed') });
          }}
        />
        {dialogs}
      </Paper>
      {locks.data && <SitesCard appId={appId} locks={locks.data} />}
    </Box>
  );
}

interface LocksTableProps {
  appId: string;
  locks: Lock[];
  /** The lock whose actions menu is open. */
  menuOpenFor: string | undefined;
  onActions: (anchor: HTMLElement, lock: Lock) => void;
}

/**
 * One row per lock: its name (a link to the lock), its live state with what it runs on (virtual, or its
 * device online or offline) and a button for its actions.
 */
function LocksTable({ appId, locks, menuOpenFor, onActions }: LocksTableProps) {
  const { t } = useTranslation();
  return (
    <TableContainer sx={{ mt: 2 }}>
      <Table aria-label={t('locks.title')}>
        <TableHead>
          <TableRow>
            <TableCell>{t('locks.name')}</TableCell>
            <TableCell>{t('locks.state')}</TableCell>
            <TableCell align="right">{t('locks.actions')}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {locks.map((lock) => (
            <TableRow key={lock.id} hover>
              <TableCell sx={{ overflowWrap: 'anywhere' }}>
                <Link
                  component={RouterLink}
                  to={paths.lock(appId, lock.id)}
                  aria-label={t('locks.open', { name: lock.name })}
                >
                  {lock.name}
                </Link>
              </TableCell>
              <TableCell>
                {/* Side by side, or one over the other on a phone. */}
                <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1 }}>
                  <LockStateChip state={lock.state} />
                  <DeviceChip device={lock.device} />
                </Box>
              </TableCell>
              <TableCell align="right">
                <IconButton
                  aria-label={t('locks.rowActions', { name: lock.name })}
                  aria-haspopup="menu"
                  aria-expanded={menuOpenFor === lock.id}
                  onClick={(e) => onActions(e.currentTarget, lock)}
                >
                  <Icon icon={faEllipsisVertical} />
                </IconButton>
              </TableCell>
            </TableRow>
          ))}
          {locks.length === 0 && (
            <TableRow>
              <TableCell colSpan={3} align="center" sx={{ py: 4 }}>
                {t('locks.empty')}
              </TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
    </TableContainer>
  );
}
