import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../lib/http';
import { LoadingDialog } from './loading-dialog';
import { MessageDialog } from './message-dialog';

interface SuccessSpec {
  message: string;
  buttonLabel?: string;
  onClose?: () => void;
}

interface RunOptions {
  success?: SuccessSpec;
  /** A fixed failure text (e.g. the owner messages); otherwise the server's message is shown. */
  failureMessage?: string | ((error: unknown) => string);
}

/**
 * Loading dialog (after 100 ms), 'Failed' dialog and optional 'Success' dialog around one call.
 * Every save and removal goes through this, so none can fail silently.
 */
export function useOperation() {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [success, setSuccess] = useState<SuccessSpec | null>(null);

  const run = useCallback(async <T,>(fn: () => Promise<T>, options: RunOptions = {}): Promise<{ ok: true; value: T } | { ok: false }> => {
    setBusy(true);
    try {
      const value = await fn();
      if (options.success) setSuccess(options.success);
      return { ok: true, value };
    } catch (e) {
      console.error(e);
      const fixed = options.failureMessage;
      setFailure(typeof fixed === 'function' ? fixed(e) : (fixed ?? errorMessage(e)));
      return { ok: false };
    } finally {
      setBusy(false);
    }
  }, []);

  const dialogs = (
    <>
      <LoadingDialog active={busy} />
      <MessageDialog
        open={failure !== null}
        tone="error"
        title={t('common.failedTitle')}
        message={failure ?? undefined}
        buttonLabel={t('common.done')}
        onClose={() => setFailure(null)}
      />
      <MessageDialog
        open={success !== null}
        tone="success"
        title={t('common.success')}
        message={success?.message}
        buttonLabel={success?.buttonLabel ?? t('common.done')}
        onClose={() => {
          const after = success?.onClose;
          setSuccess(null);
          after?.();
        }}
      />
    </>
  );

  return { run, busy, dialogs };
}
