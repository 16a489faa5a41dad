import { faLockOpen } from '@fortawesome/free-solid-svg-icons';
import { DEFAULT_LOCK_NAME, type Application, type LockShare } from '@latchkey/contract';
import { Alert, Box, Button, Link, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useOutletContext } from 'react-router';
import { paths } from '../../../lib/paths';
import { CodeBlock } from '../../../components/ui/code-block';
import { CopyValue } from '../../../components/ui/copy-value';
import { Icon } from '../../../components/ui/icon';
import { PageLoader } from '../../../components/ui/page-loader';
import { usePortalConfig } from '../../../lib/config';
import { errorMessage } from '../../../lib/http';
import { useQuery } from '@tanstack/react-query';
import { useLocks } from '../api';
import { sharesQuery } from '../shares-api';
import { exampleScriptUrl } from './example-script';
import { KEY_FILE_PLACEHOLDER, unlockCommand, USER_EMAIL_PLACEHOLDER } from './unlock-snippet';
import { StepTitle, Value } from '../../../components/ui/guide-parts';
import { GenerateKeyButton } from '../../applications/overview/generate-key-dialog';
import { privateKeyFileName, rememberedKeyFormat } from '../../../lib/key-pair';
import { algorithmFor } from '../../../lib/jwk-algorithm';

/** Shown in the command until the application has an auth domain / key; the warnings above say so. */
const ISSUER_PLACEHOLDER = 'https://auth.your-company.com';
const KID_PLACEHOLDER = 'your-key-id';

/** The user the guide signs for: someone the lock is shared with by email, a signed-in (active) one first. */
export function sharedUserEmail(shares: LockShare[] | undefined): string | null {
  const withEmail = (shares ?? []).filter((s) => s.email);
  return (withEmail.find((s) => s.status === 'active') ?? withEmail[0])?.email ?? null;
}

/**
 * Getting Started → Your backend: the example script's run, filled in with this application's values and
 * its first lock ("Front Door" for a new application). Drawn inside the Getting Started page, which hands
 * down the application.
 */
export function UnlockGuide() {
  const { t } = useTranslation();
  const app = useOutletContext<Application>();
  const config = usePortalConfig();
  const locks = useLocks(app.applicationId);
  const lock = locks.data?.find((l) => l.name === DEFAULT_LOCK_NAME) ?? locks.data?.[0];
  // USER_EMAIL is someone the lock is shared with, when there is one.
  const shares = useQuery({ ...sharesQuery(app.applicationId, lock?.id ?? ''), enabled: lock !== undefined });
  if (config.isPending || locks.isPending) return <PageLoader />;
  if (config.isError || locks.isError)
    return <Alert severity="error">{errorMessage(config.error ?? locks.error)}</Alert>;

  const key = Object.values(app.authKeys)[0];
  const kid = key?.kid;
  const issuer = app.authDomains[0];
  const sharedEmail = sharedUserEmail(shares.data);
  // The file the portal saved the key as, in the format chosen then (a PEM key also needs its ALG).
  const keyFormat = kid ? rememberedKeyFormat(kid) : 'jwk';
  const keyFile = kid ? privateKeyFileName(kid, keyFormat) : null;
  const command = unlockCommand({
    apiBase: `${window.location.origin}/api`,
    scriptUrl: exampleScriptUrl(window.location.origin),
    // The key stays where the browser saved it: the commands run beside it and make the example's folder there.
    keyFile: keyFile ? `../${keyFile}` : KEY_FILE_PLACEHOLDER,
    issuer: issuer ?? ISSUER_PLACEHOLDER,
    kid: kid ?? KID_PLACEHOLDER,
    ...(key && keyFormat === 'pem' ? { alg: algorithmFor(key) } : {}),
    audience: config.data.platformAudience,
    lockId: lock?.id ?? '',
    userEmail: sharedEmail ?? USER_EMAIL_PLACEHOLDER,
  });
  const toOverview = (
    <Link component={RouterLink} to={paths.overview(app.applicationId)}>
      {t('gettingStarted.toOverview')}
    </Link>
  );
  const lockLink = lock && (
    <Button
      variant="outlined"
      component={RouterLink}
      to={paths.lock(app.applicationId, lock.id)}
      startIcon={<Icon icon={faLockOpen} />}
      sx={{ mt: 1.5 }}
    >
      {t('gettingStarted.openLock', { lock: lock.name })}
    </Button>
  );

  return (
    <Box component="ol" sx={{ pl: { xs: 2.5, sm: 3 }, mt: 3, mb: 0, '& > li': { mb: 4, minWidth: 0 } }}>
      <li>
        <StepTitle>{t('gettingStarted.valuesTitle')}</StepTitle>
        <Typography sx={{ mb: 1 }}>{t('gettingStarted.backendValuesText')}</Typography>
        <Box
          component="dl"
          sx={{
            display: 'grid',
            gridTemplateColumns: { xs: '1fr', sm: 'max-content 1fr' },
            columnGap: 3,
            rowGap: 0.5,
            m: 0,
          }}
        >
          <Value term={t('gettingStarted.apiBase')}>
            <code>{`${window.location.origin}/api`}</code>
          </Value>
          <Value term={t('gettingStarted.issuer')}>
            {issuer ? (
              <code>{issuer}</code>
            ) : (
              <Alert severity="warning">
                {t('gettingStarted.noIssuer')} {toOverview}
              </Alert>
            )}
          </Value>
          <Value term={t('gettingStarted.key')}>
            {key ? (
              <>
                <code>{key.kid}</code> ({algorithmFor(key)})
              </>
            ) : (
              <Alert severity="warning">
                {t('gettingStarted.noKey')} {toOverview}
                <Box sx={{ mt: 1 }}>
                  <GenerateKeyButton applicationId={app.applicationId} />
                </Box>
              </Alert>
            )}
          </Value>
          <Value term={t('gettingStarted.audience')}>
            <CopyValue value={config.data.platformAudience} name={t('gettingStarted.audience')} />
          </Value>
          <Value term={t('gettingStarted.lock')}>
            {lock ? (
              <>
                {lock.name} (<code>{lock.id}</code>)
              </>
            ) : (
              <Alert severity="warning">
                {t('gettingStarted.noLock')}{' '}
                <Link component={RouterLink} to={paths.appLocks(app.applicationId)}>
                  {t('gettingStarted.toLocks')}
                </Link>
              </Alert>
            )}
          </Value>
        </Box>
      </li>
      <li>
        <StepTitle>{t('gettingStarted.shareTitle')}</StepTitle>
        <Typography>
          {sharedEmail && lock
            ? t('gettingStarted.sharedWith', { lock: lock.name, email: sharedEmail })
            : t('gettingStarted.shareText', { lock: lock?.name ?? DEFAULT_LOCK_NAME })}
        </Typography>
        {lockLink}
      </li>
      <li>
        <StepTitle>{t('gettingStarted.runTitle')}</StepTitle>
        <Typography>{t('gettingStarted.runText')}</Typography>
        {keyFile && <Typography sx={{ mt: 1, overflowWrap: 'anywhere' }}>{t('gettingStarted.keyFileText', { file: keyFile })}</Typography>}
        <CodeBlock
          code={command}
          label={t('gettingStarted.codeLabel', {
            step: t('gettingStarted.runTitle'),
            language: t('gettingStarted.commandLabel'),
          })}
          copyable
        />
      </li>
      <li>
        <StepTitle>{t('gettingStarted.watchTitle')}</StepTitle>
        <Typography>{t('gettingStarted.watchText')}</Typography>
        {lockLink}
      </li>
    </Box>
  );
}
