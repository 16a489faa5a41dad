import { faMagnifyingGlass, faUserPlus } from '@fortawesome/free-solid-svg-icons';
import { MAX_TEXT_LENGTH, type ApplicationUser } from '@latchkey/contract';
import { Box, Button, InputAdornment, Paper, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { ConfirmDialog } from '../../components/ui/confirm-dialog';
import { Icon } from '../../components/ui/icon';
import { showSaved } from '../../components/ui/saved-notice';
import { useOperation } from '../../components/ui/use-operation';
import { useDebouncedValue } from '../../lib/use-debounced-value';
import { AddUserDialog } from './add-user-dialog';
import { UsersTable } from './users-table';
import { useRemoveUser, useUsers } from './users-api';
import { RetryAlert } from '../../components/ui/retry-alert';

const SEARCH_DEBOUNCE_MS = 300;

/**
 * Settings (partner users), made real: the application's users from the API, searched on the
 * server, paged by cursor ("Load more"), with Add user (by email, pending until first sign-in) and Remove.
 */
export function SettingsPage() {
  const { t } = useTranslation();
  const { appId = '' } = useParams();
  const [searchInput, setSearchInput] = useState('');
  const search = useDebouncedValue(searchInput.trim(), SEARCH_DEBOUNCE_MS);
  const users = useUsers(appId, search);
  const remove = useRemoveUser(appId);
  const op = useOperation();
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<ApplicationUser | null>(null);

  const rows = users.data?.pages.flatMap((page) => page.users) ?? [];
  // With placeholder data the rows still answer the previous search until the new one arrives.
  const shownSearch = users.isPlaceholderData ? '' : search;

  const onRemove = async (user: ApplicationUser) => {
    setRemoving(null);
    await op.run(() => remove.mutateAsync(user.userId), { notice: t('common.removed') });
  };

  return (
    <Paper variant="outlined" sx={{ p: { xs: 2, sm: 3 } }}>
      <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 2, alignItems: 'center', mb: 2 }}>
        <Typography variant="h1" sx={{ flexGrow: 1 }}>
          {t('settings.title')}
        </Typography>
        <TextField
          label={t('settings.search')}
          type="search"
          value={searchInput}
          onChange={(e) => setSearchInput(e.target.value)}
          margin="none"
          size="small"
          fullWidth={false}
          slotProps={{
            htmlInput: { maxLength: MAX_TEXT_LENGTH },
            input: { startAdornment: <InputAdornment position="start"><Icon icon={faMagnifyingGlass} /></InputAdornment> },
          }}
        />
        <Button variant="contained" onClick={() => setAdding(true)} startIcon={<Icon icon={faUserPlus} />}>
          {t('settings.addUser')}
        </Button>
      </Box>
      {users.isError && (
        <RetryAlert
          error={users.error}
          text={(message) => t('settings.loadFailed', { message })}
          onRetry={() => void users.refetch()}
          sx={{ mb: 2 }}
        />
      )}
      {!(users.isError && rows.length === 0) && (
        <UsersTable users={rows} loading={users.isPending || (users.isFetching && users.isPlaceholderData)} search={shownSearch} onRemove={setRemoving} />
      )}
      {users.hasNextPage && (
        <Box sx={{ display: 'flex', justifyContent: 'center', mt: 2 }}>
          <Button variant="outlined" onClick={() => void users.fetchNextPage()} disabled={users.isFetchingNextPage}>
            {users.isFetchingNextPage ? t('common.loading') : t('settings.loadMore')}
          </Button>
        </Box>
      )}
      <AddUserDialog
        applicationId={appId}
        open={adding}
        onCancel={() => setAdding(false)}
        onAdded={(email) => {
          setAdding(false);
          showSaved(t('settings.userAdded', { email }));
        }}
      />
      <ConfirmDialog
        open={removing !== null}
        title={t('settings.removeConfirm')}
        message={removing?.email ?? removing?.displayName ?? undefined}
        confirmLabel={t('common.remove')}
        cancelLabel={t('common.cancel')}
        onConfirm={() => removing && void onRemove(removing)}
        onCancel={() => setRemoving(null)}
      />
      {op.dialogs}
    </Paper>
  );
}
