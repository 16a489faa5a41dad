import { faUpload } from '@fortawesome/free-solid-svg-icons';
import { LOGO_CONTENT_TYPES, LOGO_PREVIEW_PX } from '@latchkey/contract';
import { Box, Button, FormHelperText, LinearProgress, Typography } from '@mui/material';
import { useId, useRef, useState, type ChangeEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';
import { MessageDialog } from '../../../components/ui/message-dialog';
import { LogoFileError, useLogoUpload } from '../logo-api';

interface Props {
  applicationId: string;
  logoUrl: string | null;
  /** Called with the derived CDN URL once the bytes are uploaded. */
  onUploaded: (logoUrl: string) => Promise<void> | void;
  disabled?: boolean;
}

/** Logo preview (150 px square), the 60 px hint, file choice with type/size messages and a progress bar. */
export function LogoPicker({ applicationId, logoUrl, onUploaded, disabled = false }: Props) {
  const { t } = useTranslation();
  const { upload, progress, uploading } = useLogoUpload(applicationId);
  const [fileError, setFileError] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  const hintId = useId();
  const fileInput = useRef<HTMLInputElement>(null);

  const onFile = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = ''; // choosing the same file again must fire change again
    if (!file) return;
    setFileError(null);
    try {
      await onUploaded(await upload(file));
    } catch (err) {
      if (err instanceof LogoFileError) setFileError(err.message);
      else setFailed(true);
    }
  };

  return (
    <Box sx={{ display: 'flex', gap: 2, alignItems: 'flex-start', flexWrap: 'wrap' }}>
      <Box
        sx={{
          width: LOGO_PREVIEW_PX,
          height: LOGO_PREVIEW_PX,
          border: 1,
          borderColor: 'grey.300',
          borderRadius: 1,
          display: 'flex',
          alignItems: 'center',
          justifyContent: 'center',
          bgcolor: 'grey.100',
          flexShrink: 0,
        }}
      >
        {logoUrl ? (
          <Box component="img" src={logoUrl} alt={t('overview.logo')} sx={{ maxWidth: '100%', maxHeight: '100%', objectFit: 'contain' }} />
        ) : (
          <Typography variant="body2" color="text.secondary" sx={{ p: 1, textAlign: 'center' }}>
            {t('overview.noLogo')}
          </Typography>
        )}
      </Box>
      <Box sx={{ flex: '1 1 200px', minWidth: 0 }}>
        {/* A real button that opens the file dialog: a label drawn as a button is not allowed the button role. */}
        <Button
          variant="outlined"
          startIcon={<Icon icon={faUpload} />}
          disabled={disabled || uploading}
          aria-describedby={hintId}
          onClick={() => fileInput.current?.click()}
        >
          {t('overview.uploadLogo')}
        </Button>
        <input
          ref={fileInput}
          hidden
          type="file"
          accept={LOGO_CONTENT_TYPES.join(',')}
          aria-label={t('overview.uploadLogo')}
          onChange={(e) => void onFile(e)}
        />
        <FormHelperText id={hintId}>{t('overview.logoHint')}</FormHelperText>
        {fileError && (
          <FormHelperText error role="alert">
            {fileError}
          </FormHelperText>
        )}
        {progress !== null && (
          <LinearProgress
            variant="determinate"
            value={Math.round(progress * 100)}
            aria-label={t('overview.uploading')}
            sx={{ mt: 1 }}
          />
        )}
      </Box>
      <MessageDialog
        open={failed}
        tone="error"
        title={t('overview.logoUploadTitle')}
        message={t('overview.logoUploadMessage')}
        buttonLabel={t('common.done')}
        onClose={() => setFailed(false)}
      />
    </Box>
  );
}
