import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../lib/http';
import { LoadingDialog } from './loading-dialog';
import { MessageDialog } from './message-dialog';
import { showSaved } from './saved-notice';

interface SuccessSpec {
  message: string;
  buttonLabel?: string;
  onClose?: () => void;
}

interface RunOptions {
  /**
   * A save: the non-blocking notice shown once it worked — 'Saved' unless a text is given. Every save of
   * the portal says so the same way; a blocking dialog is kept for what leaves the page (`success`).
   */
  notice?: true | string;
  success?: SuccessSpec;
  /** A fixed failure text (e.g. the owner messages); otherwise the server's message is shown. */
  failureMessage?: string | ((error: unknown) => string);
  /**
   * Where the caller shows a failure itself (under a dialog's field, under a card's fields) and keeps the
   * input: it returns true when it did, and no 'Failed' dialog appears. The message is in the result.
   */
  inPlace?: (error: unknown, message: string) => boolean;
}

export type OperationResult<T> = { ok: true; value: T } | { ok: false; message: string; error: unknown };

/**
 * Loading dialog (after 100 ms), 'Failed' dialog (unless the caller shows the failure in place), the
 * 'Saved' notice and an optional 'Success' dialog around one call. Every save and removal goes through
 * this, so none can fail silently, and none succeeds without a sign.
 */
export function useOperation() {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [success, setSuccess] = useState<SuccessSpec | null>(null);

  const run = useCallback(
    async <T,>(fn: () => Promise<T>, options: RunOptions = {}): Promise<OperationResult<T>> => {
      setBusy(true);
      try {
        const value = await fn();
        if (options.notice) showSaved(options.notice === true ? t('common.saved') : options.notice);
        if (options.success) setSuccess(options.success);
        return { ok: true, value };
      } catch (e) {
        const fixed = options.failureMessage;
        const message = typeof fixed === 'function' ? fixed(e) : (fixed ?? errorMessage(e));
        if (!options.inPlace?.(e, message)) {
          console.error(e);
          setFailure(message);
        }
        return { ok: false, message, error: e };
      } finally {
        setBusy(false);
      }
    },
    [t],
  );

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
