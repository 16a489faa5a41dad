import type { CertificateResponse } from '@latchkey/contract';
import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { lazyPart } from '../../components/ui/lazy-part';
import { paths } from '../../lib/paths';
import { getSession } from '../../lib/session';
import type { AskKeyCode } from './unlock-api';

/** Asked for only when a new key needs a code: fetched then, before the dialog is drawn. */
const EmailedCodeDialog = lazyPart(() =>
  import('../../components/ui/emailed-code-dialog').then((m) => m.EmailedCodeDialog),
);

type Actions = Parameters<AskKeyCode>[0];
interface Pending extends Actions {
  resolve: (certificate: CertificateResponse | null) => void;
}

/**
 * The second factor for this browser's new key: `askCode` opens the dialog and resolves with the
 * certificate once a code was accepted, or null on Cancel. Render `dialog` somewhere on the page.
 */
export function useKeyCodeDialog(): { askCode: AskKeyCode; dialog: React.ReactNode } {
  const [pending, setPending] = useState<Pending | null>(null);
  const askCode = useCallback<AskKeyCode>(
    (actions) =>
      EmailedCodeDialog.preload().then(
        () => new Promise<CertificateResponse | null>((resolve) => setPending({ ...actions, resolve })),
      ),
    [],
  );
  const close = (certificate: CertificateResponse | null) => {
    pending?.resolve(certificate);
    setPending(null);
  };
  return { askCode, dialog: pending ? <KeyCodeDialog pending={pending} onClose={close} /> : null };
}

function KeyCodeDialog({ pending, onClose }: { pending: Pending; onClose: (c: CertificateResponse | null) => void }) {
  const { t } = useTranslation();
  const { appId } = useParams();
  return (
    <EmailedCodeDialog
      title={t('account.codeTitle')}
      intro={t('account.codeIntro', { email: getSession().email ?? '' })}
      submitLabel={t('account.codeSubmit')}
      outboxHref={appId ? paths.outbox(appId) : undefined}
      onSubmit={async (code) => onClose(await pending.submit(code))}
      onResend={pending.resend}
      onCancel={() => onClose(null)}
    />
  );
}
