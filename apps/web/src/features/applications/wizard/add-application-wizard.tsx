import { faXmark } from '@fortawesome/free-solid-svg-icons';
import { Alert, Box, IconButton, Step, StepLabel, Stepper, Typography } from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { useDeferredValue, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate, useSearchParams } from 'react-router';
import { paths, RESUME_PARAM } from '../../../lib/paths';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { LoadingDialog } from '../../../components/ui/loading-dialog';
import { MessageDialog } from '../../../components/ui/message-dialog';
import { PageLoader } from '../../../components/ui/page-loader';
import { SavedNoticeHost } from '../../../components/ui/saved-notice';
import { errorMessage } from '../../../lib/http';
import { applicationKeys, createApplication, updateApplication, useApplication } from '../api';
import { StepApplicationInfo } from './step-application-info';
import { StepBranding } from './step-branding';
import { StepEmailInfo } from './step-email-info';
import { StepUrls } from './step-urls';
import { useExitGuard } from './use-exit-guard';
import {
  initialWizardValues,
  isLastStep,
  LAST_STEP,
  unfinishedSteps,
  wizardValuesOf,
  shouldWarnOnExit,
  stepCall,
  type WizardDrafts,
  type WizardStep,
  type WizardValues,
} from './wizard-steps';

interface WizardStart {
  step: WizardStep;
  values: WizardValues;
  applicationId: string | null;
}

const fresh: WizardStart = { step: 0, values: initialWizardValues, applicationId: null };

/**
 * The add-application wizard, shown in the start screen's side panel at /start/new. With
 * `?resume=<id>` it continues an application whose setup was left unfinished, at its first missing step.
 */
export function AddApplicationWizard() {
  // The steps mount in a deferred render, which React time-slices, after the panel itself: on a slow
  // phone the panel and its first step in one render were one long task (docs/performance.md).
  const ready = useDeferredValue(true, false);
  const [params] = useSearchParams();
  const resumeId = params.get(RESUME_PARAM);
  const resumed = useApplication(resumeId ?? undefined);
  if (!ready) return null;
  if (!resumeId) return <Wizard start={fresh} />;
  if (resumed.isPending) return <PageLoader />;
  if (!resumed.data) return <Box sx={{ p: 3 }}><Alert severity="error">{errorMessage(resumed.error)}</Alert></Box>;
  const app = resumed.data;
  return <Wizard start={{ step: unfinishedSteps(app)[0] ?? LAST_STEP, values: wizardValuesOf(app), applicationId: app.applicationId }} />;
}

function Wizard({ start }: { start: WizardStart }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [step, setStep] = useState<WizardStep>(start.step);
  const [values, setValues] = useState<WizardValues>(start.values);
  const [drafts, setDrafts] = useState<WizardDrafts>({});
  const [applicationId, setApplicationId] = useState<string | null>(start.applicationId);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [added, setAdded] = useState(false);
  const blocker = useExitGuard(shouldWarnOnExit(step, added), t('wizard.beforeUnload'));
  const stepLabels = t('wizard.steps', { returnObjects: true });

  async function save<S extends WizardStep>(current: S, stepValues: WizardValues[S], inPlace: (error: unknown) => boolean) {
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
      // The step stays and says why: under the refused fields (focus on the first), else in a dialog.
      if (!inPlace(e)) setFailure(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  // Back decrements the step and saves nothing; what the step held, valid or not, waits for the user's return.
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
      {step === 0 && <StepApplicationInfo {...props} onSubmit={(v, inPlace) => save(0, v, inPlace)} onBack={(d) => back(0, d)} />}
      {step === 1 && <StepUrls {...props} onSubmit={(v, inPlace) => save(1, v, inPlace)} onBack={(d) => back(1, d)} />}
      {step === 2 && <StepEmailInfo {...props} onSubmit={(v, inPlace) => save(2, v, inPlace)} onBack={(d) => back(2, d)} />}
      {step === 3 && <StepBranding {...props} onSubmit={(v, inPlace) => save(3, v, inPlace)} onBack={(d) => back(3, d)} />}

      <LoadingDialog active={busy} />
      {/* The page behind the panel is hidden from assistive technology while it is open. */}
      <SavedNoticeHost />
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
        // As its words promise: the new application's integration steps, not the list.
        onClose={() => void navigate(applicationId ? paths.gettingStarted(applicationId) : paths.start)}
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
