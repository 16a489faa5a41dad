import { faCircleCheck, faCircleMinus, faCircleXmark } from '@fortawesome/free-solid-svg-icons';
import type { TokenCheck, TokenCheckReport } from '@latchkey/contract';
import { Alert, Box, List, ListItem, ListItemIcon, ListItemText, Typography } from '@mui/material';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { CodeBlock } from '../../../components/ui/code-block';
import { Icon } from '../../../components/ui/icon';
import { localText } from '../../../lib/server-text';

const look: Record<TokenCheck['status'], { icon: typeof faCircleCheck; colour: string }> = {
  pass: { icon: faCircleCheck, colour: 'success.main' },
  fail: { icon: faCircleXmark, colour: 'error.main' },
  skipped: { icon: faCircleMinus, colour: 'text.secondary' },
};

/** The token tester's result: the verdict, every check with its status in words and reason, the decoded parts. */
export function TokenCheckReportView({ report }: { report: TokenCheckReport }) {
  const { t } = useTranslation();
  const checksId = useId();
  return (
    <Box sx={{ mt: 2 }}>
      <Alert severity={report.valid ? 'success' : 'error'}>
        {report.valid ? t('tokenTester.valid') : t('tokenTester.invalid', { error: report.error ?? '' })}
      </Alert>
      {report.keySource && (
        <Typography sx={{ mt: 1.5 }} data-testid="token-key-source">
          <Box component="span" sx={{ fontWeight: 600 }}>
            {t('issuerKeys.sourceHeading')}
            {': '}
          </Box>
          <Box component="span" sx={{ overflowWrap: 'anywhere' }}>
            {report.keySource.type === 'issuer'
              ? t('issuerKeys.sourceIssuer', { kid: report.keySource.kid, jwksUri: report.keySource.jwksUri ?? '' })
              : t('issuerKeys.sourceUploaded', { kid: report.keySource.kid })}
          </Box>
          {report.keySource.configProblem && (
            <Box component="span" sx={{ display: 'block', color: 'warning.dark', overflowWrap: 'anywhere' }}>
              {t('issuerKeys.sourceLastGood', { problem: localText(report.keySource.configProblem) })}
            </Box>
          )}
        </Typography>
      )}
      <Typography id={checksId} variant="h3" sx={{ mt: 2 }}>
        {t('tokenTester.checksHeading')}
      </Typography>
      <List aria-labelledby={checksId} dense>
        {report.checks.map((check) => {
          const { icon, colour } = look[check.status];
          return (
            <ListItem key={check.id} disableGutters alignItems="flex-start">
              <ListItemIcon sx={{ minWidth: 32, mt: 0.75, color: colour }}>
                <Icon icon={icon} />
              </ListItemIcon>
              <ListItemText
                primary={
                  <>
                    {t(`tokenTester.checks.${check.id}`)}
                    {': '}
                    <Box component="span" sx={{ fontWeight: 600, color: colour }}>
                      {t(`tokenTester.status.${check.status}`)}
                    </Box>
                  </>
                }
                secondary={check.message}
                slotProps={{ secondary: { sx: { overflowWrap: 'anywhere' } } }}
              />
            </ListItem>
          );
        })}
      </List>
      <Typography variant="h3" sx={{ mt: 1 }}>
        {t('tokenTester.header')}
      </Typography>
      <Decoded value={report.header} label={t('tokenTester.header')} />
      <Typography variant="h3" sx={{ mt: 1 }}>
        {t('tokenTester.claims')}
      </Typography>
      <Decoded value={report.claims} label={t('tokenTester.claims')} />
    </Box>
  );
}

function Decoded({ value, label }: { value: Record<string, unknown> | null; label: string }) {
  const { t } = useTranslation();
  if (!value) return <Typography color="text.secondary">{t('tokenTester.notDecoded')}</Typography>;
  return <CodeBlock code={JSON.stringify(value, null, 2)} label={label} />;
}
