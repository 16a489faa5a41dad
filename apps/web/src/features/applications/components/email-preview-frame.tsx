import { useTranslation } from 'react-i18next';
import { ScaledEmailFrame } from '../../../components/ui/scaled-email-frame';
import { useDebouncedValue } from '../../../lib/use-debounced-value';
import { emailPreviewSrc, type PreviewInput } from './email-preview-query';

/**
 * Live email preview that follows the form as the user types, debounced to spare the server, in the
 * scaled email frame of components/ui (the preview's CSP forbids every script in it besides). The server
 * renders the stored application, so the caller passes a `revision` that changes whenever that
 * application does: the frame then reloads.
 */
export function EmailPreviewFrame({ applicationId, input, revision }: { applicationId: string; input: PreviewInput; revision?: string }) {
  const { t, i18n } = useTranslation();
  const src = useDebouncedValue(emailPreviewSrc(applicationId, { ...input, lang: i18n.language }), 400);
  return <ScaledEmailFrame title={t('wizard.preview')} src={src} lazy frameKey={revision} />;
}
