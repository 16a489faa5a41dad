import { faXmark } from '@fortawesome/free-solid-svg-icons';
import { Box, IconButton, Step, StepLabel, Stepper, Typography } from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { paths } from '../../../app/paths';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { LoadingDialog } from '../../../components/ui/loading-dialog';
import { MessageDialog } from '../../../components/ui/message-dialog';
import { errorMessage } from '../../../lib/http';
import { applicationKeys, createApplication, updateApplication } from '../api';
import { StepApplicationInfo } from './step-application-info';
import { StepBranding } from './step-branding';
import { StepEmailInfo } from './step-email-info';
import { StepUrls } from './step-urls';
import { useExitGuard } from './use-exit-guard';
import {
  initialWizardValues,
  isLastStep,
  shouldWarnOnExit,
  stepCall,
  type WizardDrafts,
  type WizardStep,
  type WizardValues,
} from './wizard-steps';

/** Spec §2/§4 add-application wizard, shown in the start screen's side panel at /start/new. */
export function AddApplicationWizard() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [step, setStep] = useState<WizardStep>(0);
  const [values, setValues] = useState<WizardValues>(initialWizardValues);
  const [drafts, setDrafts] = useState<WizardDrafts>({});
  const [applicationId, setApplicationId] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [added, setAdded] = useState(false);
  const blocker = useExitGuard(shouldWarnOnExit(step, added), t('wizard.beforeUnload'));
  const stepLabels = t('wizard.steps', { returnObjects: true });

  async function save<S extends WizardStep>(current: S, stepValues: WizardValues[S]) {
    const next = { ...values, [current]: stepValues } as WizardValues;
    setValues(next);
    setBusy(true);
    try {
      const call = stepCall(current, next);
      if (call.kind === 'create') setApplicationId(await createApplication(call.body));
      else await updateApplication(applicationId!, call.body);
      void queryClient.invalidateQueries({ queryKey: applicationKeys.all });
      setDrafts(({ [current]: _saved, ...rest }) => rest); // what was just saved replaces any draft of it
      if (isLastStep(current)) setAdded(true);
      else setStep((current + 1) as WizardStep);
    } catch (e) {
      // The seed stayed silent here; the step stays and says why.
      setFailure(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  // Spec §4: Back decrements the step and saves nothing; what the step held, valid or not, waits for the user's return.
  function back<S extends WizardStep>(current: S, draft: WizardValues[S]) {
    setDrafts((d) => ({ ...d, [current]: draft }));
    setStep(Math.max(0, current - 1) as WizardStep);
  }

  const close = () => void navigate(paths.start);
  const props = { applicationId, values, drafts, busy };

  return (
    <Box component="section" aria-labelledby="wizard-title" sx={{ p: { xs: 2, sm: 3 } }}>
      <Box sx={{ display: 'flex', alignItems: 'center', mb: 2 }}>
        <Typography id="wizard-title" variant="h2" sx={{ flexGrow: 1 }}>
          {t('wizard.title')}
        </Typography>
        <IconButton aria-label={t('wizard.closeWizard')} onClick={close}>
          <Icon icon={faXmark} />
        </IconButton>
      </Box>
      <Stepper activeStep={step} alternativeLabel sx={{ mb: 2, '& .MuiStepLabel-label': { fontSize: { xs: 12, sm: 14 } } }}>
        {stepLabels.map((label) => (
          <Step key={label}>
            <StepLabel>{label}</StepLabel>
          </Step>
        ))}
      </Stepper>
      <Typography variant="h3" component="h3" sx={{ mt: 2 }}>
        {stepLabels[step]}
      </Typography>
      {step === 0 && <StepApplicationInfo {...props} onSubmit={(v) => void save(0, v)} onBack={(d) => back(0, d)} />}
      {step === 1 && <StepUrls {...props} onSubmit={(v) => void save(1, v)} onBack={(d) => back(1, d)} />}
      {step === 2 && <StepEmailInfo {...props} onSubmit={(v) => void save(2, v)} onBack={(d) => back(2, d)} />}
      {step === 3 && <StepBranding {...props} onSubmit={(v) => void save(3, v)} onBack={(d) => back(3, d)} />}

      <LoadingDialog active={busy} />
      <MessageDialog
        open={failure !== null}
        tone="error"
        title={t('common.failedTitle')}
        message={failure ?? undefined}
        buttonLabel={t('common.done')}
        onClose={() => setFailure(null)}
      />
      <MessageDialog
        open={added}
        tone="success"
        title={t('common.success')}
        message={t('wizard.successMessage')}
        buttonLabel={t('common.letsGetStarted')}
        onClose={close}
      />
      <ConfirmDialog
        open={blocker.state === 'blocked'}
        title={t('wizard.exitTitle')}
        message={t('wizard.exitMessage')}
        confirmLabel={t('wizard.leave')}
        cancelLabel={t('wizard.stay')}
        onConfirm={() => blocker.proceed?.()}
        onCancel={() => blocker.reset?.()}
      />
    </Box>
  );
}
