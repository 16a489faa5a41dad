import { faPen } from '@fortawesome/free-solid-svg-icons';
import { Box, Button, Card, CardActions, CardContent, IconButton, Tooltip, Typography } from '@mui/material';
import type { FormEventHandler, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';

interface Props {
  title: string;
  headingId: string;
  editing?: boolean;
  /** Omit for cards without edit mode. */
  onEdit?: () => void;
  onCancel?: () => void;
  onSubmit?: FormEventHandler<HTMLFormElement>;
  saveEnabled?: boolean;
  children: ReactNode;
  /** Rendered below the form, outside it: sections with dialogs of their own (a dialog's submit would bubble into the card's form through the React tree). */
  after?: ReactNode;
}

/** Overview card; with onEdit it is a form with the pen icon, and Save/Cancel while editing. */
export function EditableCard({ title, headingId, editing = false, onEdit, onCancel, onSubmit, saveEnabled = false, children, after }: Props) {
  const { t } = useTranslation();
  const editLabel = t('overview.edit', { card: title });
  return (
    <Card component="section" aria-labelledby={headingId} sx={{ mb: 3 }}>
      <Box component={onSubmit ? 'form' : 'div'} noValidate={onSubmit ? true : undefined} onSubmit={onSubmit}>
        <CardContent>
          <Box sx={{ display: 'flex', alignItems: 'center', mb: 1 }}>
            <Typography id={headingId} variant="h2" sx={{ flexGrow: 1 }}>
              {title}
            </Typography>
            {onEdit && !editing && (
              <Tooltip title={editLabel}>
                <IconButton aria-label={editLabel} onClick={onEdit}>
                  <Icon icon={faPen} />
                </IconButton>
              </Tooltip>
            )}
          </Box>
          {children}
        </CardContent>
        {editing && (
          <CardActions sx={{ justifyContent: 'flex-end', px: 2, pb: 2 }}>
            <Button onClick={onCancel}>{t('common.cancel')}</Button>
            <Button type="submit" variant="contained" disabled={!saveEnabled}>
              {t('common.save')}
            </Button>
          </CardActions>
        )}
      </Box>
      {after && <CardContent sx={{ pt: 0 }}>{after}</CardContent>}
    </Card>
  );
}
