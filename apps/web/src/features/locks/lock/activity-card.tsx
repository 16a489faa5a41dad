import type { LockLogEntry } from '@latchkey/contract';
import {
  Alert,
  Box,
  Button,
  Chip,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { PageLoader } from '../../../components/ui/page-loader';
import { SectionCard } from '../../../components/ui/section-card';
import { stackedOnPhone } from '../../../components/ui/stacked-table';
import { useLockLog, type LogRange } from '../log-api';
import { describeSubject, formatLogTime } from './format';
import { RetryAlert } from '../../../components/ui/retry-alert';
import { localText } from '../../../lib/server-text';
import { pickerFormat } from '../../../lib/dates';
import { useAccessCodes } from '../access-codes/api';
import { CsvButton } from '../csv/csv-button';
import { lockCsvPath } from '../csv/csv-paths';
import { describeMethod, DOOR_REPORTS, DoorReport, EntryOrigin } from './activity-details';

/** The filter lives in the URL (?from=yyyy-mm-dd&to=yyyy-mm-dd), whole local days, both inclusive. */
export function rangeFromDays(from: string | null, to: string | null): LogRange {
  const day = (value: string | null, endOfDay: boolean) => {
    if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
    const ms = Date.parse(`${value}T${endOfDay ? '23:59:59.999' : '00:00:00'}`);
    return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
  };
  return { start: day(from, false), end: day(to, true) };
}

/**
 * Who did it, by their email as the shares and History name people, and what it concerned; then how
 * ("with access code “Cleaner”"). A door's own report with nobody behind it names no one.
 */
function Actor({ entry, how }: { entry: LockLogEntry; how: string | null }) {
  const { t } = useTranslation();
  const name = entry.actor.email ?? entry.actor.displayName ?? entry.actor.userId ?? (how ? null : t('activity.system'));
  const subject = how && entry.type === 'UNLOCK' ? null : describeSubject(entry, t);
  return (
    <>
      {name}
      {subject && (
        <Typography component="span" variant="body2" color="text.secondary">
          {' '}
          {subject}
        </Typography>
      )}
      {how && (
        <Typography component="span" variant="body2" color={name ? 'text.secondary' : undefined}>
          {name ? ' ' : ''}
          {how}
        </Typography>
      )}
    </>
  );
}

/** The lock's log, newest first; new entries arrive live (the lock page follows the events). */
export function ActivityCard({ appId, lockId }: { appId: string; lockId: string }) {
  const { t, i18n } = useTranslation();
  const [params, setParams] = useSearchParams();
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const range = rangeFromDays(from, to);
  const log = useLockLog(appId, lockId, range);
  const entries = log.data?.pages.flatMap((p) => p.items) ?? [];
  // An entry made with a code names it by the code's name, from the lock's codes.
  const codes = useAccessCodes(appId, lockId);
  const codeName = (id: string) => codes.data?.find((c) => c.accessCodeId === id)?.name;
  // The pickers write dates as the browser does: said under them where the page writes dates otherwise.
  const format = pickerFormat(i18n.language);
  const formatHint = format ? t('common.pickerFormat', { format }) : undefined;
  const setDay = (key: 'from' | 'to', value: string) =>
    setParams(
      (prev) => {
        const next = new URLSearchParams(prev);
        if (value) next.set(key, value);
        else next.delete(key);
        return next;
      },
      { replace: true },
    );

  return (
    <SectionCard
      headingId="activity-heading"
      title={t('activity.title')}
      headerGap={2}
      // The entries over the range chosen below, as a file for an auditor.
      action={<CsvButton path={lockCsvPath(appId, lockId, range)} fileName={`activity-${lockId}.csv`} />}
    >
      <Box
        role="group"
        aria-label={t('activity.filter')}
        sx={{ display: 'flex', flexWrap: 'wrap', gap: 2, mb: 2, alignItems: 'center' }}
      >
        <TextField
          type="date"
          size="small"
          sx={{ flex: '1 1 150px', maxWidth: 220 }}
          label={t('activity.from')}
          value={from}
          onChange={(e) => setDay('from', e.target.value)}
          helperText={formatHint}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <TextField
          type="date"
          size="small"
          sx={{ flex: '1 1 150px', maxWidth: 220 }}
          label={t('activity.to')}
          value={to}
          onChange={(e) => setDay('to', e.target.value)}
          helperText={formatHint}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        {(from || to) && (
          <Button
            onClick={() =>
              setParams((prev) => (prev.delete('from'), prev.delete('to'), prev), { replace: true })
            }
          >
            {t('activity.clearFilter')}
          </Button>
        )}
      </Box>
      {log.isPending && <PageLoader />}
      {log.isError && (
        <RetryAlert
          error={log.error}
          text={(message) => t('activity.loadFailed', { message })}
          onRetry={() => void log.refetch()}
        />
      )}
      {log.data && entries.length === 0 && (
        <Typography color="text.secondary">{t('activity.empty')}</Typography>
      )}
      {entries.length > 0 && (
        <TableContainer>
          {/* On a phone each entry is its time over its captioned event and result, and who did it. */}
          <Table size="small" aria-labelledby="activity-heading" sx={stackedOnPhone}>
            <TableHead>
              <TableRow>
                <TableCell>{t('activity.time')}</TableCell>
                <TableCell>{t('activity.event')}</TableCell>
                <TableCell>{t('activity.by')}</TableCell>
                <TableCell>{t('activity.result')}</TableCell>
              </TableRow>
            </TableHead>
            {/* Live entries are announced as they arrive on top. */}
            <TableBody aria-live="polite" aria-relevant="additions">
              {entries.map((entry) =>
                entry.type === 'AUDIT_GAP' ? (
                  <TableRow key={entry.id}>
                    <TableCell sx={{ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums' }}>
                      {formatLogTime(entry.timestamp, i18n.language)}
                    </TableCell>
                    <TableCell colSpan={3} data-stack="full">
                      <Alert severity="warning" sx={{ py: 0 }}>
                        {t('activityDetails.auditGap')}
                        {entry.reason && ` ${localText(entry.reason)}`}
                      </Alert>
                    </TableCell>
                  </TableRow>
                ) : (
                  <TableRow key={entry.id}>
                    <TableCell sx={{ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums' }}>
                      {formatLogTime(entry.timestamp, i18n.language)}
                    </TableCell>
                    <TableCell data-caption={t('activity.event')}>
                      {t(`activity.types.${entry.type}`)}
                      <EntryOrigin entry={entry} />
                    </TableCell>
                    <TableCell data-caption={t('activity.by')} data-stack="full" sx={{ overflowWrap: 'anywhere', minWidth: 160 }}>
                      <Actor entry={entry} how={describeMethod(entry, t, codeName)} />
                    </TableCell>
                    <TableCell data-caption={t('activity.result')}>
                      {DOOR_REPORTS.includes(entry.type) ? (
                        <DoorReport entry={entry} />
                      ) : entry.rejected ? (
                        <Box>
                          <Chip size="small" color="error" variant="outlined" label={t('activity.refused')} />
                          {entry.reason && (
                            <Typography variant="body2" sx={{ mt: 0.5 }}>
                              {entry.reason}
                            </Typography>
                          )}
                        </Box>
                      ) : (
                        <Chip size="small" color="success" variant="outlined" label={t('activity.accepted')} />
                      )}
                    </TableCell>
                  </TableRow>
                ),
              )}
            </TableBody>
          </Table>
        </TableContainer>
      )}
      {log.hasNextPage && (
        <Button sx={{ mt: 2 }} disabled={log.isFetchingNextPage} onClick={() => void log.fetchNextPage()}>
          {t('activity.loadMore')}
        </Button>
      )}
    </SectionCard>
  );
}
