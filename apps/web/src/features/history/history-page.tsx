import { HISTORY_KINDS, type FieldChange, type HistoryEntry } from '@latchkey/contract';
import {
  Box,
  Button,
  Chip,
  Paper,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useDeferredValue } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams, useSearchParams } from 'react-router';
import { PageLoader } from '../../components/ui/page-loader';
import { stackedOnPhone } from '../../components/ui/stacked-table';
import { useLoadMore } from '../../components/ui/use-load-more';
import { formatDateTime } from '../../lib/dates';
import { localText } from '../../lib/server-text';
import { filterFromParams, useHistory, useHistoryActors } from './api';
import { isNone, useChangeValue } from './change-value';
import { RetryAlert } from '../../components/ui/retry-alert';

/** A field's name in words where the table knows it ("emailPreferences.primaryColour" → "Primary colour"). */
function useFieldLabel() {
  const { t, i18n } = useTranslation();
  return (field: string) => {
    const key = `history.fields.${field.replace(/\./g, '_')}`;
    return i18n.exists(key) ? String(t(key as never)) : field;
  };
}

/** Field | Before | After; on a phone each field over its captioned before and after (stackedOnPhone). */
function ChangeTable({ entry }: { entry: HistoryEntry }) {
  const { t } = useTranslation();
  const fieldLabel = useFieldLabel();
  const valueText = useChangeValue();
  const cell = { overflowWrap: 'anywhere', verticalAlign: 'top', whiteSpace: 'pre-line' } as const;
  const row = (change: FieldChange) => (
    <TableRow key={change.field}>
      <TableCell component="th" scope="row" sx={{ ...cell, overflowWrap: 'break-word' }}>
        {fieldLabel(change.field)}
      </TableCell>
      <TableCell sx={{ ...cell, color: 'text.secondary' }} data-caption={t('history.before')}>
        <Box component={isNone(change.before) ? 'span' : 'del'}>{valueText(change.before, change.field)}</Box>
      </TableCell>
      <TableCell sx={cell} data-caption={t('history.after')}>
        <Box component={isNone(change.after) ? 'span' : 'ins'} sx={{ textDecoration: 'none', fontWeight: 500 }}>
          {valueText(change.after, change.field)}
        </Box>
      </TableCell>
    </TableRow>
  );
  return (
    <Table size="small" aria-label={t('history.changesOf', { kind: t(`history.kinds.${entry.kind}`) })} sx={[{ tableLayout: 'fixed' }, stackedOnPhone]}>
      <TableHead>
        <TableRow>
          <TableCell sx={{ width: '30%' }}>{t('history.field')}</TableCell>
          <TableCell>{t('history.before')}</TableCell>
          <TableCell>{t('history.after')}</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>{entry.changes.map(row)}</TableBody>
    </Table>
  );
}

function Entry({ entry }: { entry: HistoryEntry }) {
  const { t, i18n } = useTranslation();
  return (
    <Box component="li" sx={{ listStyle: 'none', border: 1, borderColor: 'grey.300', borderRadius: 1, p: 2 }}>
      <Box sx={{ display: 'flex', flexWrap: 'wrap', columnGap: 1.5, rowGap: 0.5, alignItems: 'center', mb: 1 }}>
        <Chip size="small" variant="outlined" label={t(`history.kinds.${entry.kind}`)} />
        {entry.subject && (
          <Typography component="span" sx={{ fontWeight: 500, overflowWrap: 'anywhere' }}>
            {entry.subject}
          </Typography>
        )}
        <Typography component="span" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
          {t('history.by', { actor: entry.actor.email ? localText(entry.actor.email) : entry.actor.userId ?? t('history.platform') })}
        </Typography>
        <Typography component="time" color="text.secondary" dateTime={new Date(entry.at * 1000).toISOString()}>
          {formatDateTime(entry.at, i18n.language)}
        </Typography>
      </Box>
      <ChangeTable entry={entry} />
    </Box>
  );
}

/**
 * The application's change history: who changed what and when, newest first, with the before and after
 * of every changed field. The filters are in the URL, so a filtered view can be linked to.
 */
export function HistoryPage() {
  const { t } = useTranslation();
  const { appId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const filter = filterFromParams(params);
  const history = useHistory(appId, filter);
  const actorsQuery = useHistoryActors(appId);
  // The entries mount in one deferred render, which React time-slices, once the entries and the actor
  // choices are both in (the shell started loading them with the application): an answer arriving in the
  // middle of that render would redo it synchronously, one long task on a slow phone (as on the lock page).
  const listReady = useDeferredValue(history.data !== undefined && !actorsQuery.isPending, false);
  const actors = (actorsQuery.data ?? []).flatMap((a) => {
    const value = a.userId ?? a.email;
    return value ? [{ value, label: a.email ?? a.userId ?? value }] : [];
  });
  const entries = history.data?.pages.flatMap((p) => p.items) ?? [];
  const { list, loadMore } = useLoadMore<HTMLOListElement>(entries.length, history.fetchNextPage, history.isFetchingNextPage);

  const setFilter = (name: 'kind' | 'actor', value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next, { replace: true });
  };

  return (
    <Paper variant="outlined" sx={{ p: { xs: 2, sm: 3 } }}>
      <Typography variant="h1" sx={{ mb: 1 }}>
        {t('history.title')}
      </Typography>
      <Typography color="text.secondary" sx={{ mb: 2 }}>
        {t('history.intro')}
      </Typography>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mb: 3 }}>
        <TextField
          select
          size="small"
          label={t('history.kindFilter')}
          value={filter.kind ?? ''}
          onChange={(e) => setFilter('kind', e.target.value)}
          slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
          sx={{ minWidth: 220 }}
        >
          <option value="">{t('history.allKinds')}</option>
          {HISTORY_KINDS.map((k) => (
            <option key={k} value={k}>
              {t(`history.kinds.${k}`)}
            </option>
          ))}
        </TextField>
        <TextField
          select
          size="small"
          label={t('history.actorFilter')}
          value={filter.actor ?? ''}
          onChange={(e) => setFilter('actor', e.target.value)}
          slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
          sx={{ minWidth: 260 }}
        >
          <option value="">{t('history.allActors')}</option>
          {actors.map((a) => (
            <option key={a.value} value={a.value}>
              {a.label}
            </option>
          ))}
          {filter.actor && !actors.some((a) => a.value === filter.actor) && <option value={filter.actor}>{filter.actor}</option>}
        </TextField>
      </Stack>
      {!history.isError && !listReady && <PageLoader />}
      {history.isError && (
        <RetryAlert
          error={history.error}
          text={(message) => t('history.loadFailed', { message })}
          onRetry={() => void history.refetch()}
        />
      )}
      {listReady && entries.length === 0 && <Typography>{t('history.empty')}</Typography>}
      {listReady && entries.length > 0 && (
        <Stack component="ol" ref={list} spacing={2} aria-label={t('history.entries')} sx={{ p: 0, m: 0 }}>
          {entries.map((entry) => (
            <Entry key={entry.id} entry={entry} />
          ))}
        </Stack>
      )}
      {listReady && history.hasNextPage && (
        <Button sx={{ mt: 2 }} variant="outlined" onClick={loadMore} aria-disabled={history.isFetchingNextPage}>
          {t('history.loadMore')}
        </Button>
      )}
    </Paper>
  );
}
