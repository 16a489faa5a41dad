import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { MessageDialog } from '../../../components/ui/message-dialog';
import { useUpdateApplication } from '../api';
import { LogoPicker } from './logo-picker';

interface Props {
  applicationId: string;
  logoUrl: string | null;
  disabled?: boolean;
  /** Called with the logoUrl once the application stores it. */
  onSaved?: (logoUrl: string) => void;
}

/**
 * Spec §4 logo upload: the uploaded logo is saved to the application at once, the application reloaded,
 * and a success message shown. Used by the overview's Email & Branding card and the wizard's Branding
 * step alike: the email preview is rendered from the stored application, so only a stored logo can show
 * in it. A failed save shows the picker's 'Try again' dialog and changes nothing.
 */
export function StoredLogoPicker({ applicationId, logoUrl, disabled = false, onSaved }: Props) {
  const { t } = useTranslation();
  const update = useUpdateApplication(applicationId);
  const [saved, setSaved] = useState(false);
  return (
    <>
      <LogoPicker
        applicationId={applicationId}
        logoUrl={logoUrl}
        disabled={disabled || update.isPending}
        onUploaded={async (url) => {
          await update.mutateAsync({ logoUrl: url });
          onSaved?.(url);
          setSaved(true);
        }}
      />
      <MessageDialog
        open={saved}
        tone="success"
        title={t('common.success')}
        message={t('overview.logoUploaded')}
        buttonLabel={t('common.done')}
        onClose={() => setSaved(false)}
      />
    </>
  );
}
