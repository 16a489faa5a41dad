import { faEllipsisVertical } from '@fortawesome/free-solid-svg-icons';
import type { ApplicationUser } from '@latchkey/contract';
import {
  Box,
  Chip,
  CircularProgress,
  IconButton,
  Menu,
  MenuItem,
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
import { Icon } from '../../components/ui/icon';
import { stackedOnPhone } from '../../components/ui/stacked-table';
import { formatDate } from '../../lib/dates';

interface Props {
  users: ApplicationUser[];
  loading: boolean;
  /** The search the rows answer, for the "nothing matches" text. */
  search: string;
  onRemove: (user: ApplicationUser) => void;
}

const COLUMNS = 5;

/** Partner users: User Email, Display Name, Added (dd/mm/yyyy), Status and a row menu of actions. */
export function UsersTable({ users, loading, search, onRemove }: Props) {
  const { t, i18n } = useTranslation();
  const [menu, setMenu] = useState<{ anchor: HTMLElement; user: ApplicationUser } | null>(null);
  const notSet = (
    <Typography component="span" variant="inherit" color="text.secondary">
      {t('settings.notSet')}
    </Typography>
  );

  return (
    <TableContainer>
      {/* On a phone each user is their email (and the row menu) over their captioned name, date and status. */}
      <Table aria-label={t('settings.title')} aria-busy={loading} sx={stackedOnPhone}>
        <TableHead>
          <TableRow>
            <TableCell>{t('settings.userEmail')}</TableCell>
            <TableCell>{t('settings.displayName')}</TableCell>
            <TableCell>{t('settings.added')}</TableCell>
            <TableCell>{t('settings.status')}</TableCell>
            <TableCell align="right">{t('settings.actions')}</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {users.map((user) => {
            const who = user.email ?? user.displayName ?? user.sub ?? user.userId;
            return (
              <TableRow key={user.userId} hover>
                <TableCell sx={{ overflowWrap: 'anywhere' }}>{user.email ?? notSet}</TableCell>
                <TableCell data-caption={t('settings.displayName')} sx={{ overflowWrap: 'anywhere' }}>
                  {user.displayName ?? notSet}
                </TableCell>
                <TableCell data-caption={t('settings.added')}>{formatDate(user.createdAt, i18n.language)}</TableCell>
                <TableCell data-caption={t('settings.status')}>
                  <Chip
                    size="small"
                    variant="outlined"
                    color={user.status === 'active' ? 'success' : 'default'}
                    label={t(`settings.statusValue.${user.status}`)}
                  />
                </TableCell>
                <TableCell align="right" data-actions>
                  <IconButton
                    aria-label={t('settings.rowActions', { user: who })}
                    aria-haspopup="menu"
                    aria-expanded={menu?.user.userId === user.userId}
                    onClick={(e) => setMenu({ anchor: e.currentTarget, user })}
                  >
                    <Icon icon={faEllipsisVertical} />
                  </IconButton>
                </TableCell>
              </TableRow>
            );
          })}
          {users.length === 0 && (
            <TableRow>
              <TableCell colSpan={COLUMNS} align="center" sx={{ py: 4 }}>
                {/* On a phone the table scrolls sideways; keep the message in view and wrapped to the screen. */}
                <Box sx={{ position: 'sticky', left: 0, maxWidth: { xs: 'calc(100vw - 80px)', sm: 'none' } }}>
                  {loading ? (
                    <CircularProgress size={28} aria-label={t('common.loading')} />
                  ) : search ? (
                    t('settings.noMatch', { search })
                  ) : (
                    <Box>
                      <Typography>{t('settings.empty')}</Typography>
                      <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
                        {t('settings.emptyHint')}
                      </Typography>
                    </Box>
                  )}
                </Box>
              </TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
      <Menu anchorEl={menu?.anchor} open={menu !== null} onClose={() => setMenu(null)}>
        <MenuItem
          onClick={() => {
            const user = menu?.user;
            setMenu(null);
            if (user) onRemove(user);
          }}
        >
          {t('settings.removeUser')}
        </MenuItem>
      </Menu>
    </TableContainer>
  );
}
