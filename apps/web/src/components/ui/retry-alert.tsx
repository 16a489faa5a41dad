import { Alert, Button, type SxProps, type Theme } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../lib/http';

interface Props {
  /** The failed request's error; its message is shown. */
  error: unknown;
  /** The page's own sentence around the server's message; without it the message stands alone. */
  text?: (message: string) => string;
  /** Loads again. Left out when trying again cannot help (the thing is not there). */
  onRetry?: () => void;
  sx?: SxProps<Theme>;
}

/** Something a page needs could not be loaded: what went wrong, and a button to try again. */
export function RetryAlert({ error, text, onRetry, sx }: Props) {
  const { t } = useTranslation();
  const message = errorMessage(error);
  return (
    <Alert
      severity="error"
      sx={sx}
      action={
        onRetry && (
          <Button color="inherit" size="small" onClick={onRetry}>
            {t('common.retry')}
          </Button>
        )
      }
    >
      {text ? text(message) : message}
    </Alert>
  );
}
