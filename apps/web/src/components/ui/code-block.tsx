import { faCopy } from '@fortawesome/free-solid-svg-icons';
import { Box, Button } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from './icon';
import { visuallyHidden } from './visually-hidden';

/** From this width of the block on, the copy button goes beside the code instead of above it. */
const WIDE_BLOCK_PX = 600;

interface Props {
  code: string;
  /** Names the block for screen readers (it is a focusable, scrollable region). */
  label: string;
  copyable?: boolean;
}

/**
 * Preformatted code that never widens the page: long lines scroll inside the block, which is focusable
 * so keyboard users can scroll it too (axe: scrollable-region-focusable). The copy button sits beside the
 * code where the block is wide, above it where the block is narrow (a dialog, a notice, a phone): it is
 * the block's own width that decides, so the button never covers a line of code.
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
    <Box sx={{ position: 'relative', my: 1.5, minWidth: 0, ...(copyable && { containerType: 'inline-size' }) }}>
      <Box
        component="pre"
        tabIndex={0}
        role="region"
        aria-label={label}
        sx={{
          m: 0,
          p: 2,
          pr: 2,
          pt: copyable ? 6 : 2,
          ...(copyable && { [`@container (min-width: ${WIDE_BLOCK_PX}px)`]: { pr: 12, pt: 2 } }),
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
