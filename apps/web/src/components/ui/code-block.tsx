import { faCopy } from '@fortawesome/free-solid-svg-icons';
import { Box, Button } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from './icon';
import { visuallyHidden } from './visually-hidden';

interface Props {
  code: string;
  /** Names the block for screen readers (it is a focusable, scrollable region). */
  label: string;
  copyable?: boolean;
}

/**
 * Preformatted code that never widens the page: long lines scroll inside the block, which is focusable
 * so keyboard users can scroll it too (axe: scrollable-region-focusable).
 */
export function CodeBlock({ code, label, copyable = false }: Props) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const id = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(id);
  }, [copied]);

  const copy = () => {
    // Clipboard access can be refused (permissions, insecure origin); selecting by hand still works.
    navigator.clipboard?.writeText(code).then(() => setCopied(true), () => undefined);
  };

  return (
    <Box sx={{ position: 'relative', my: 1.5, minWidth: 0 }}>
      <Box
        component="pre"
        tabIndex={0}
        role="region"
        aria-label={label}
        sx={{
          m: 0,
          p: 2,
          pr: copyable ? { xs: 2, sm: 12 } : 2,
          pt: copyable ? { xs: 6, sm: 2 } : 2,
          maxWidth: '100%',
          overflowX: 'auto',
          bgcolor: 'grey.100',
          border: 1,
          borderColor: 'grey.300',
          borderRadius: 1,
          fontSize: '0.8125rem',
          lineHeight: 1.5,
          '&:focus-visible': { outline: 2, outlineColor: 'secondary.main', outlineStyle: 'solid' },
        }}
      >
        <code>{code}</code>
      </Box>
      {copyable && (
        <Button
          size="small"
          variant="outlined"
          onClick={copy}
          startIcon={<Icon icon={faCopy} />}
          aria-label={`${t('common.copyCode')}: ${label}`}
          sx={{ position: 'absolute', top: 8, right: 8, bgcolor: 'background.paper' }}
        >
          {copied ? t('common.copied') : t('common.copyCode')}
        </Button>
      )}
      <Box component="span" role="status" sx={visuallyHidden}>
        {copied ? t('common.copied') : ''}
      </Box>
    </Box>
  );
}
