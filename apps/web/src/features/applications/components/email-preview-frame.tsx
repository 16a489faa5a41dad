import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { ScaledEmailFrame } from '../../../components/ui/scaled-email-frame';
import { request } from '../../../lib/http';
import { useDebouncedValue } from '../../../lib/use-debounced-value';
import { emailPreviewPath, type PreviewInput } from './email-preview-query';

/**
 * Live email preview that follows the form as the user types, debounced to spare the server, in the
 * scaled email frame of components/ui (sandboxed without scripts; the portal's CSP forbids inline script
 * besides).
 *
 * The unsaved form (call to action, colours) is rendered by the API for a signed-in owner only — never
 * caller-chosen content on the portal's origin for anyone — so the portal fetches the HTML with its bearer token and shows it through `srcdoc`; no URL
 * that renders caller-chosen content exists for a frame or a link. While a change loads (or a half-typed
 * colour is refused) the last preview stays. The server renders the stored application, so the caller
 * passes a `revision` that changes whenever that application does: the preview is fetched again.
 */
export function EmailPreviewFrame({ applicationId, input, revision }: { applicationId: string; input: PreviewInput; revision?: string }) {
  const { t, i18n } = useTranslation();
  const path = useDebouncedValue(emailPreviewPath(applicationId, { ...input, lang: i18n.language }), 400);
  const html = useQuery({
    queryKey: ['email-preview', path, revision ?? ''],
    queryFn: async ({ signal }) => (await request(path, { accept: 'text/html', signal })).text(),
    placeholderData: keepPreviousData,
    staleTime: Infinity,
    gcTime: 60_000,
    retry: false,
  });
  return <ScaledEmailFrame title={t('wizard.preview')} srcDoc={html.data ?? ''} frameKey={revision} />;
}
