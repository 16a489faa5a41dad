import type { Application } from '@latchkey/contract';
import { Alert, Button } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { paths } from '../../../lib/paths';
import { unfinishedSteps } from '../wizard/wizard-steps';

/** Which of the wizard's steps an application still lacks, named as the wizard names them. */
export function useMissingSteps(app: Application): string[] {
  const { t } = useTranslation();
  const labels = t('wizard.steps', { returnObjects: true });
  return unfinishedSteps(app).map((step) => labels[step] ?? '');
}

/**
 * An application left part-way through the wizard looks finished otherwise: this says what is missing
 * and offers to resume the wizard where it was left.
 */
export function UnfinishedSetup({ app }: { app: Application }) {
  const { t } = useTranslation();
  const missing = useMissingSteps(app);
  if (missing.length === 0) return null;
  return (
    <Alert
      severity="warning"
      sx={{ mb: 3 }}
      action={
        <Button component={RouterLink} to={paths.resumeApplication(app.applicationId)} color="inherit" size="small" variant="outlined">
          {t('setup.resume')}
        </Button>
      }
    >
      {t('setup.missing', { steps: missing.join(', ') })}
    </Alert>
  );
}
