import type { AuthErrorEntry } from '@latchkey/contract';
import { useTranslation } from 'react-i18next';
import { MessageDialog } from '../../components/ui/message-dialog';

/**
 * The sign-in error dialog: errorTitle, errorMessage, and Done to dismiss. The default subtitle 'try again' is left
 * out: every message already says what to do, and the two read as 'try again' twice.
 */
export function AuthErrorDialog({ error, onDismiss }: { error: AuthErrorEntry | null; onDismiss: () => void }) {
  const { t } = useTranslation();
  return (
    <MessageDialog
      open={error !== null}
      tone="error"
      title={error?.title ?? ''}
      message={error?.message}
      buttonLabel={t('common.done')}
      onClose={onDismiss}
    />
  );
}
