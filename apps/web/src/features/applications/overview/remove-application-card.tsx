import { Button, Card, CardContent, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { paths } from '../../../lib/paths';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { useOperation } from '../../../components/ui/use-operation';
import { useDeleteApplication } from '../api';

/** Confirm → loading → success (its button goes to /start); a failure is shown, not only logged. */
export function RemoveApplicationCard({ applicationId }: { applicationId: string }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const remove = useDeleteApplication(applicationId);
  const op = useOperation();
  const [confirming, setConfirming] = useState(false);

  const onConfirm = () => {
    setConfirming(false);
    void op.run(() => remove.mutateAsync(), {
      success: { message: t('overview.removed'), buttonLabel: t('nav.backToStart'), onClose: () => void navigate(paths.start) },
    });
  };

  return (
    <Card component="section" aria-labelledby="card-remove" sx={{ mb: 3, borderColor: 'error.main' }}>
      <CardContent>
        <Typography id="card-remove" variant="h2" sx={{ mb: 1 }}>
          {t('overview.removeCard')}
        </Typography>
        <Typography color="text.secondary" sx={{ mb: 2 }}>
          {t('overview.removeText')}
        </Typography>
        <Button variant="contained" color="error" onClick={() => setConfirming(true)}>
          {t('overview.removeButton')}
        </Button>
      </CardContent>
      <ConfirmDialog
        open={confirming}
        title={t('overview.removeConfirm')}
        confirmLabel={t('common.remove')}
        cancelLabel={t('common.cancel')}
        onConfirm={onConfirm}
        onCancel={() => setConfirming(false)}
      />
      {op.dialogs}
    </Card>
  );
}
