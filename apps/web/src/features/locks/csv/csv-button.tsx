import { faFileCsv } from '@fortawesome/free-solid-svg-icons';
import { Button } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';
import { useOperation } from '../../../components/ui/use-operation';

/** The download's code is fetched on the click: the page that shows the button runs none of it. */
const downloadCsv = (path: string, fileName: string) => import('./download').then((m) => m.downloadCsv(path, fileName));

/** "Download CSV" (or `label`): saves the activity at `path` (an authenticated route) as `fileName`, or says why it could not. */
export function CsvButton({ path, fileName, label }: { path: string; fileName: string; label?: string }) {
  const { t } = useTranslation();
  const { run, busy, dialogs } = useOperation();
  return (
    <>
      <Button
        variant="outlined"
        size="small"
        startIcon={<Icon icon={faFileCsv} />}
        disabled={busy}
        onClick={() => void run(() => downloadCsv(path, fileName), { notice: t('activityDetails.csvSaved') })}
      >
        {label ?? t('activityDetails.downloadCsv')}
      </Button>
      {dialogs}
    </>
  );
}
