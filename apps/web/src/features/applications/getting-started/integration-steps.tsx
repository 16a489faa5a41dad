import { faShieldHalved, faUsers } from '@fortawesome/free-solid-svg-icons';
import type { Application } from '@latchkey/contract';
import { Alert, Box, Button, Link, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { paths, type Platform } from '../../../lib/paths';
import { CodeBlock } from '../../../components/ui/code-block';
import { CopyValue } from '../../../components/ui/copy-value';
import { Icon } from '../../../components/ui/icon';
import { GenerateKeyButton } from '../overview/generate-key-dialog';
import { algorithmFor } from '../../../lib/jwk-algorithm';
import { SNIPPETS, snippetValues } from './snippets';
import { StepTitle, Value } from '../../../components/ui/guide-parts';

interface Props {
  app: Application;
  platform: Platform;
  audience: string;
}

/** The four steps of one platform tab: the values, signing a user token, calling the API, checking a token. */
export function IntegrationSteps({ app, platform, audience }: Props) {
  const { t } = useTranslation();
  const values = snippetValues(app, audience, window.location.origin);
  const snippet = SNIPPETS[platform];
  const keys = Object.values(app.authKeys);
  const signTitle = t('gettingStarted.signTitle');
  const callTitle = t('gettingStarted.callTitle');
  const toOverview = (
    <Link component={RouterLink} to={paths.overview(app.applicationId)}>
      {t('gettingStarted.toOverview')}
    </Link>
  );

  return (
    <Box component="ol" sx={{ pl: { xs: 2.5, sm: 3 }, mt: 3, mb: 0, '& > li': { mb: 4, minWidth: 0 } }}>
      <li>
        <StepTitle>{t('gettingStarted.valuesTitle')}</StepTitle>
        <Typography sx={{ mb: 1 }}>{t('gettingStarted.valuesText')}</Typography>
        <Box component="dl" sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: 'max-content 1fr' }, columnGap: 3, rowGap: 0.5, m: 0 }}>
          <Value term={t('gettingStarted.applicationId')}>
            <code>{app.applicationId}</code>
          </Value>
          <Value term={t('gettingStarted.issuer')}>
            {app.authDomains.length === 0 ? (
              <Alert severity="warning" sx={{ mt: 0.5 }}>
                {t('gettingStarted.noIssuer')} {toOverview}
              </Alert>
            ) : (
              app.authDomains.map((url) => (
                <Box key={url}>
                  <code>{url}</code>
                </Box>
              ))
            )}
          </Value>
          <Value term={t('gettingStarted.audience')}>
            <CopyValue value={audience} name={t('gettingStarted.audience')} />
          </Value>
          <Value term={t('gettingStarted.key')}>
            {keys.length === 0 ? (
              <Alert severity="warning" sx={{ mt: 0.5 }}>
                {t('gettingStarted.noKey')} {toOverview}
                <Box sx={{ mt: 1 }}>
                  <GenerateKeyButton applicationId={app.applicationId} />
                </Box>
              </Alert>
            ) : (
              keys.map((key) => (
                <Box key={key.kid}>
                  <code>{key.kid}</code> ({algorithmFor(key)})
                </Box>
              ))
            )}
          </Value>
        </Box>
      </li>
      <li>
        <StepTitle>{signTitle}</StepTitle>
        <Typography>{t(`gettingStarted.signText.${platform}`)}</Typography>
        <CodeBlock code={snippet.sign(values)} label={t('gettingStarted.codeLabel', { step: signTitle, language: snippet.language })} copyable />
      </li>
      <li>
        <StepTitle>{callTitle}</StepTitle>
        <Typography>{t(`gettingStarted.callText.${platform}`)}</Typography>
        <CodeBlock code={snippet.call(values)} label={t('gettingStarted.codeLabel', { step: callTitle, language: snippet.language })} copyable />
      </li>
      <li>
        <StepTitle>{t('gettingStarted.testTitle')}</StepTitle>
        <Typography>{t('gettingStarted.testText')}</Typography>
        <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, mt: 1.5 }}>
          <Button
            variant="contained"
            component={RouterLink}
            to={paths.tokenTester(app.applicationId)}
            startIcon={<Icon icon={faShieldHalved} />}
          >
            {t('gettingStarted.openTester')}
          </Button>
          <Button variant="outlined" component={RouterLink} to={paths.settings(app.applicationId)} startIcon={<Icon icon={faUsers} />}>
            {t('gettingStarted.partnerUsers')}
          </Button>
        </Box>
      </li>
    </Box>
  );
}
