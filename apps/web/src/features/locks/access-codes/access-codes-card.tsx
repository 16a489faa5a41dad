import { faKey, faPlus } from '@fortawesome/free-solid-svg-icons';
import type { AccessCode } from '@latchkey/contract';
import { Box, Button, Chip, List, ListItem, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { CopyValue } from '../../../components/ui/copy-value';
import { Icon } from '../../../components/ui/icon';
import { lazyPart } from '../../../components/ui/lazy-part';
import { useOpenedOnce } from '../../../components/ui/use-opened-once';
import { PageLoader } from '../../../components/ui/page-loader';
import { RetryAlert } from '../../../components/ui/retry-alert';
import { SectionCard } from '../../../components/ui/section-card';
import { useOperation } from '../../../components/ui/use-operation';
import { useAccessCodes, useFollowAccessCodeChanges, useWithdrawAccessCode } from './api';
import { describeWindow } from './format';

const CreateCodeDialog = lazyPart(() => import('./create-code-dialog').then((m) => m.CreateCodeDialog));
/** What a click on the card opens: the lock page fetches it once its cards are drawn. */
export const ACCESS_CODES_CARD_PARTS = [CreateCodeDialog];

const STATUS_COLOUR = { setting: 'info', set: 'success', withdrawn: 'default' } as const;

function CodeItem({ code, onWithdraw }: { code: AccessCode; onWithdraw: (code: AccessCode) => void }) {
  const { t, i18n } = useTranslation();
  const withdrawn = code.status === 'withdrawn';
  return (
    <ListItem divider sx={{ flexWrap: 'wrap', gap: 1, px: 0, alignItems: 'flex-start' }}>
      <Box sx={{ minWidth: 0, flex: '1 1 14rem' }}>
        <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 1 }}>
          <Typography component="span" sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>
            {code.name}
          </Typography>
          <Chip size="small" variant="outlined" label={t(`accessCodes.kinds.${code.kind}`)} />
          <Chip
            size="small"
            variant="outlined"
            color={STATUS_COLOUR[code.status]}
            label={t(`accessCodes.statuses.${code.status}`)}
          />
        </Box>
        <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
          {describeWindow(code, t, i18n.language)}
        </Typography>
        <Box sx={{ mt: 0.5, fontSize: '1.1rem', textDecoration: withdrawn ? 'line-through' : undefined }}>
          <CopyValue value={code.code} name={t('accessCodes.codeOf', { name: code.name })} />
        </Box>
        {withdrawn && code.kind === 'offline' && (
          <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
            {t('accessCodes.withdrawnOffline')}
          </Typography>
        )}
        {code.status === 'setting' && (
          <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
            {t('accessCodes.settingText')}
          </Typography>
        )}
      </Box>
      {!withdrawn && (
        <Button
          size="small"
          color="error"
          sx={{ ml: 'auto' }}
          aria-label={t('accessCodes.withdrawOne', { name: code.name })}
          onClick={() => onWithdraw(code)}
        >
          {t('accessCodes.withdraw')}
        </Button>
      )}
    </ListItem>
  );
}

/**
 * A lock's access codes (PINs typed at its keypad): the code itself (owners may see it again), its kind,
 * when it holds and whether the door has it; create one, withdraw one after confirming.
 */
export function AccessCodesCard({ appId, lockId }: { appId: string; lockId: string }) {
  const { t } = useTranslation();
  const codes = useAccessCodes(appId, lockId);
  useFollowAccessCodeChanges(appId, lockId);
  const withdraw = useWithdrawAccessCode(appId, lockId);
  const { run, dialogs } = useOperation();
  const [creating, setCreating] = useState(false);
  const creatingOnce = useOpenedOnce(creating);
  const [withdrawing, setWithdrawing] = useState<AccessCode | null>(null);

  return (
    <SectionCard
      headingId="access-codes-heading"
      title={t('accessCodes.title')}
      action={
        <Button variant="outlined" startIcon={<Icon icon={faPlus} />} onClick={() => setCreating(true)}>
          {t('accessCodes.create')}
        </Button>
      }
    >
      <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
        {t('accessCodes.intro')}
      </Typography>
      <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
        {t('accessCodes.offlineText')} {t('accessCodes.offlineWithdrawText')}
      </Typography>
      {codes.isPending && <PageLoader />}
      {codes.isError && (
        <RetryAlert
          error={codes.error}
          text={(message) => t('accessCodes.loadFailed', { message })}
          onRetry={() => void codes.refetch()}
          sx={{ mt: 2 }}
        />
      )}
      {codes.data?.length === 0 && (
        <Typography sx={{ mt: 2, display: 'flex', alignItems: 'center', gap: 1 }}>
          <Icon icon={faKey} />
          {t('accessCodes.none')}
        </Typography>
      )}
      {codes.data && codes.data.length > 0 && (
        <List aria-label={t('accessCodes.title')} sx={{ mt: 1 }}>
          {codes.data.map((code) => (
            <CodeItem key={code.accessCodeId} code={code} onWithdraw={setWithdrawing} />
          ))}
        </List>
      )}
      {creatingOnce && (
        <CreateCodeDialog appId={appId} lockId={lockId} open={creating} onClose={() => setCreating(false)} />
      )}
      <ConfirmDialog
        open={withdrawing !== null}
        title={t('accessCodes.withdrawTitle', { name: withdrawing?.name ?? '' })}
        message={t('accessCodes.withdrawText')}
        confirmLabel={t('accessCodes.withdraw')}
        cancelLabel={t('common.cancel')}
        onCancel={() => setWithdrawing(null)}
        onConfirm={() => {
          const code = withdrawing!;
          setWithdrawing(null);
          void run(() => withdraw.mutateAsync(code.accessCodeId), {
            notice: t('accessCodes.withdrawn', { name: code.name }),
          });
        }}
      />
      {dialogs}
    </SectionCard>
  );
}
