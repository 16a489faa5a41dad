import { useTranslation } from 'react-i18next';
import { showSaved } from '../../../components/ui/saved-notice';
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
 * Logo upload: the uploaded logo is saved to the application at once, the application reloaded,
 * and the 'Saved' notice shown. Used by the overview's Email & Branding card and the wizard's Branding
 * step alike: the email preview is rendered from the stored application, so only a stored logo can show
 * in it. A failed save shows the picker's 'Try again' dialog and changes nothing.
 */
export function StoredLogoPicker({ applicationId, logoUrl, disabled = false, onSaved }: Props) {
  const { t } = useTranslation();
  const update = useUpdateApplication(applicationId);
  return (
    <>
      <LogoPicker
        applicationId={applicationId}
        logoUrl={logoUrl}
        disabled={disabled || update.isPending}
        onUploaded={async (url) => {
          await update.mutateAsync({ logoUrl: url });
          onSaved?.(url);
          showSaved(t('overview.logoUploaded'));
        }}
      />
    </>
  );
}
