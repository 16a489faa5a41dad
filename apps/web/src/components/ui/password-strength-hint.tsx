import { Box, LinearProgress, Typography } from '@mui/material';
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { estimatePasswordStrength, type PasswordScore } from '../../lib/password-strength';
import { useDebouncedValue } from '../../lib/use-debounced-value';

const COLOURS = ['error', 'error', 'warning', 'success', 'success'] as const;
const WORDS = ['veryWeak', 'weak', 'fair', 'strong', 'veryStrong'] as const;

/**
 * How hard a new password is to guess, in words, under its field. Advice only: any password of the
 * minimum length is accepted. Its line is always there (empty until something is typed), so the form
 * below never moves when the hint appears.
 */
export function PasswordStrengthHint({ password, userInputs = [] }: { password: string; userInputs?: string[] }) {
  const { t } = useTranslation();
  const id = useId();
  const typed = useDebouncedValue(password, 150);
  const [score, setScore] = useState<{ for: string; value: PasswordScore } | null>(null);
  const inputs = userInputs.join('\n');

  useEffect(() => {
    if (!typed) return;
    let current = true;
    void estimatePasswordStrength(typed, inputs.split('\n')).then((value) => {
      if (current) setScore({ for: typed, value });
    });
    return () => {
      current = false;
    };
  }, [typed, inputs]);

  const shown = password && score?.for === typed ? score.value : null;
  return (
    <Box sx={{ minHeight: 28, mt: -0.5, mb: 0.5 }}>
      {shown !== null && (
        <LinearProgress
          variant="determinate"
          value={(shown + 1) * 20}
          color={COLOURS[shown]}
          aria-labelledby={id}
          sx={{ height: 4, borderRadius: 2 }}
        />
      )}
      <Typography id={id} variant="caption" color="text.secondary" aria-live="polite">
        {shown !== null ? t('passwordStrength.label', { strength: t(`passwordStrength.scores.${WORDS[shown]}`) }) : ''}
      </Typography>
    </Box>
  );
}
