import { faCheck, faCopy } from '@fortawesome/free-solid-svg-icons';
import { Box, IconButton, Tooltip } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from './icon';
import { showSaved } from './saved-notice';

interface Props {
  value: string;
  /** What the value is, for the button's accessible name ("Copy Audience (aud)"). */
  name: string;
}

/** A short value (an id, an audience) in code type with a button that copies it; long values wrap. */
export function CopyValue({ value, name }: Props) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const id = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(id);
  }, [copied]);
  const label = t('copyValue.copy', { name });

  return (
    <Box component="span" sx={{ display: 'inline-flex', alignItems: 'center', gap: 0.5, maxWidth: '100%' }}>
      <Box component="code" sx={{ overflowWrap: 'anywhere' }}>
        {value}
      </Box>
      <Tooltip title={copied ? t('common.copied') : label}>
        <IconButton
          size="small"
          aria-label={label}
          // Clipboard access can be refused (permissions, insecure origin); selecting by hand still works.
          onClick={() =>
            navigator.clipboard?.writeText(value).then(
              () => {
                setCopied(true);
                // Announced through the page's one notice (a status region), not a region of its own.
                showSaved(t('common.copied'));
              },
              () => undefined,
            )
          }
        >
          <Icon icon={copied ? faCheck : faCopy} />
        </IconButton>
      </Tooltip>
    </Box>
  );
}
