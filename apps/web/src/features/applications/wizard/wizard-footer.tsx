import { Box, Button } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { canGoBack, isLastStep, type WizardStep } from './wizard-steps';

/** Back (from step index 2) and Next/Finish, disabled while the step's form is invalid. */
export function WizardFooter({ step, isValid, busy, onBack }: { step: WizardStep; isValid: boolean; busy: boolean; onBack: () => void }) {
  const { t } = useTranslation();
  return (
    <Box sx={{ display: 'flex', justifyContent: 'flex-end', gap: 1, mt: 3 }}>
      {canGoBack(step) && (
        <Button variant="outlined" onClick={onBack} disabled={busy}>
          {t('common.back')}
        </Button>
      )}
      <Button type="submit" variant="contained" disabled={!isValid || busy}>
        {isLastStep(step) ? t('common.finish') : t('common.next')}
      </Button>
    </Box>
  );
}
