import { zodResolver } from '@hookform/resolvers/zod';
import { tokenCheckRequestSchema } from '@latchkey/contract';
import { Alert, Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle } from '@mui/material';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormTextField } from '../../../components/ui/form-text-field';
import { errorMessage } from '../../../lib/http';
import { useTokenCheck } from '../token-check-api';
import { TokenCheckReportView } from './token-check-report';

interface Props {
  applicationId: string;
  open: boolean;
  onClose: () => void;
}

/**
 * The owner pastes a user token and the platform runs its real verification against this application's
 * issuers and keys (POST …/auth/token-check). A report is shown only for the token still in the field.
 */
export function TokenTesterDialog({ applicationId, open, onClose }: Props) {
  // The form lives inside the dialog, so it exists only while the dialog is open (nothing to build or
  // re-render on the overview's load) and every opening starts from an empty field and no report.
  return (
    <Dialog open={open} onClose={onClose} aria-labelledby="token-tester-title" aria-describedby="token-tester-intro" fullWidth maxWidth="md">
      <TokenTesterForm applicationId={applicationId} onClose={onClose} />
    </Dialog>
  );
}

function TokenTesterForm({ applicationId, onClose }: Omit<Props, 'open'>) {
  const { t } = useTranslation();
  const check = useTokenCheck(applicationId);
  const form = useForm({ resolver: zodResolver(tokenCheckRequestSchema), defaultValues: { token: '' }, mode: 'onSubmit' });

  const current = form.watch('token').trim();
  const report = check.data && check.variables === current ? check.data : null;
  const failure = check.isError && check.variables === current ? errorMessage(check.error) : null;

  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.stopPropagation();
        void form.handleSubmit(({ token }) => check.mutate(token))(e);
      }}
    >
      <DialogTitle id="token-tester-title">{t('tokenTester.title')}</DialogTitle>
      <DialogContent>
        <DialogContentText id="token-tester-intro" sx={{ mb: 1 }}>
          {t('tokenTester.intro')}
        </DialogContentText>
        <FormTextField
          control={form.control}
          name="token"
          label={t('tokenTester.tokenLabel')}
          helperText={t('tokenTester.tokenHelp')}
          multiline
          minRows={4}
          maxRows={10}
          required
          autoFocus
          slotProps={{ htmlInput: { spellCheck: false, autoComplete: 'off', style: { fontFamily: 'monospace', fontSize: 13, wordBreak: 'break-all' } } }}
        />
        {failure && (
          <Alert severity="error" sx={{ mt: 2 }}>
            {t('tokenTester.requestFailed', { message: failure })}
          </Alert>
        )}
        {report && <TokenCheckReportView report={report} />}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.close')}</Button>
        <Button type="submit" variant="contained" disabled={check.isPending}>
          {check.isPending ? t('tokenTester.checking') : t('tokenTester.check')}
        </Button>
      </DialogActions>
    </form>
  );
}
