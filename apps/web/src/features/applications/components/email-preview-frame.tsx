import { EMAIL_PREVIEW_HEIGHT_PX, EMAIL_PREVIEW_WIDTH_PX } from '@latchkey/contract';
import { Box } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { useDebouncedValue } from '../../../lib/use-debounced-value';
import { emailPreviewSrc, type PreviewInput } from './email-preview-query';

/**
 * Live email preview (624×882) that follows the form as the user types, debounced to spare the server.
 * The server renders the stored application, so the caller passes a `revision` that changes whenever that
 * application does (a saved logo, sender or company name): the frame then loads again.
 */
export function EmailPreviewFrame({ applicationId, input, revision }: { applicationId: string; input: PreviewInput; revision?: string }) {
  const { t } = useTranslation();
  const src = useDebouncedValue(emailPreviewSrc(applicationId, input), 400);
  return (
    // On a narrow screen the frame scrolls sideways inside this box, so the box takes keyboard focus to be scrolled.
    <Box
      role="region"
      aria-label={t('wizard.preview')}
      tabIndex={0}
      sx={{ width: 'fit-content', maxWidth: '100%', overflowX: 'auto', border: 1, borderColor: 'grey.300', borderRadius: 1 }}
    >
      <Box
        component="iframe"
        key={revision}
        title={t('wizard.preview')}
        sandbox=""
        loading="lazy"
        src={src}
        width={EMAIL_PREVIEW_WIDTH_PX}
        height={EMAIL_PREVIEW_HEIGHT_PX}
        sx={{ display: 'block', border: 0, width: EMAIL_PREVIEW_WIDTH_PX, height: EMAIL_PREVIEW_HEIGHT_PX }}
      />
    </Box>
  );
}
