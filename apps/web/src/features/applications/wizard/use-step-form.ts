import { zodResolver } from '@hookform/resolvers/zod';
import { wizardStepSchemas } from '@latchkey/contract';
import { useEffect, useState } from 'react';
import { useForm, type FieldPath, type Resolver } from 'react-hook-form';
import { showFieldErrors } from '../../../lib/field-errors';
import type { WizardDrafts, WizardStep, WizardValues } from './wizard-steps';

export interface StepProps<S extends WizardStep> {
  applicationId: string | null;
  /** What each step last saved (or its defaults). */
  values: WizardValues;
  /** What a step's form held when the user went Back from it. */
  drafts: WizardDrafts;
  busy: boolean;
  /**
   * Saves the step. A refusal the step can show under its fields (`inPlace` returns true once it did,
   * focusing the first) stays on the step; anything else the wizard shows itself.
   */
  onSubmit: (values: WizardValues[S], inPlace: (error: unknown) => boolean) => Promise<void> | void;
  onBack: (draft: WizardValues[S]) => void;
}

/** The fields whose draft differs from what the step last saved: the ones the user changed. */
function changedFields(draft: object, saved: object): string[] {
  const before = new Map(Object.entries(saved));
  return Object.entries(draft)
    .filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(before.get(key)))
    .map(([key]) => key);
}

/**
 * One form per step, validated as the user types so Next can be disabled while invalid. It starts from
 * what the user left there with Back, else from what the step last saved; `back` keeps what is typed,
 * valid or not, without saving it (saving stays with Next and Finish).
 */
export function useStepForm<S extends WizardStep>(step: S, { values, drafts, onBack, onSubmit }: StepProps<S>) {
  const draft = drafts[step] as WizardValues[S] | undefined;
  const form = useForm<WizardValues[S], unknown, WizardValues[S]>({
    // The contract's step schema produces exactly this step's values (trimmed strings).
    resolver: zodResolver(wizardStepSchemas[step] as never) as unknown as Resolver<WizardValues[S], unknown, WizardValues[S]>,
    defaultValues: (draft ?? values[step]) as never,
    // On change and on leaving a field: an empty required field says 'Required' once touched.
    mode: 'all',
  });

  // Input the user changed before going Back shows its messages again, as it did while being typed.
  const [restored] = useState(() => (draft ? changedFields(draft, values[step]) : []) as FieldPath<WizardValues[S]>[]);
  useEffect(() => {
    if (restored.length > 0) void form.trigger(restored);
  }, [form, restored]);

  // A copy: the next form for this step must not share nested objects (the call to action) with this one.
  const back = () => onBack(structuredClone(form.getValues()) as WizardValues[S]);
  // The email steps' fields are the API's emailPreferences.*; the others are top-level.
  const submit = form.handleSubmit((v) => onSubmit(v, (error) => showFieldErrors(form, error, 'emailPreferences.')));
  return { form, back, submit };
}
