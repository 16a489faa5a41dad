import type { AuthErrorEntry } from '@latchkey/contract';
import { useTranslation } from 'react-i18next';
import { MessageDialog } from '../../components/ui/message-dialog';

/** Spec §8 dialog: errorTitle, the default subtitle 'try again', errorMessage, and Done to dismiss. */
export function AuthErrorDialog({ error, onDismiss }: { error: AuthErrorEntry | null; onDismiss: () => void }) {
  const { t } = useTranslation();
  return (
    <MessageDialog
      open={error !== null}
      tone="error"
      title={error?.title ?? ''}
      subtitle={t('common.authErrorSubtitle')}
      message={error?.message}
      buttonLabel={t('common.done')}
      onClose={onDismiss}
    />
  );
}
