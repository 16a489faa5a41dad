import { zodResolver } from '@hookform/resolvers/zod';
import { wizardStepSchemas } from '@latchkey/contract';
import { useForm, type Resolver } from 'react-hook-form';
import type { WizardStep, WizardValues } from './wizard-steps';

/** One form per step, validated as the user types so Next can be disabled while invalid. */
export function useStepForm<S extends WizardStep>(step: S, defaults: WizardValues[S]) {
  return useForm<WizardValues[S], unknown, WizardValues[S]>({
    // The contract's step schema produces exactly this step's values (trimmed strings).
    resolver: zodResolver(wizardStepSchemas[step] as never) as unknown as Resolver<WizardValues[S], unknown, WizardValues[S]>,
    defaultValues: defaults as never,
    mode: 'onChange',
  });
}

export interface StepProps<S extends WizardStep> {
  applicationId: string | null;
  values: WizardValues;
  busy: boolean;
  onSubmit: (values: WizardValues[S]) => void;
  onBack: () => void;
}
