import { faPen } from '@fortawesome/free-solid-svg-icons';
import { Box, Button, Card, CardActions, CardContent, IconButton, Tooltip, Typography } from '@mui/material';
import { useEffect, useRef, type FormEventHandler, type ReactNode } from 'react';
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
  /** Rendered beside the form on a wide screen (≥ 1280 px), below it otherwise: the email preview. */
  aside?: ReactNode;
}

/** From lg up, a card with an aside is two columns: the form and what follows it, and the aside beside them. */
const withAsideSx = {
  display: { lg: 'grid' },
  gridTemplateColumns: { lg: 'minmax(0, 1fr) 624px' },
  gridTemplateRows: { lg: 'auto 1fr' },
} as const;

/** Overview card; with onEdit it is a form with the pen icon, and Save/Cancel while editing. */
export function EditableCard({ title, headingId, editing = false, onEdit, onCancel, onSubmit, saveEnabled = false, children, after, aside }: Props) {
  const { t } = useTranslation();
  const editLabel = t('overview.edit', { card: title });
  // The pen leads into the form: its first editable field takes focus (not the page top, where the
  // unmounted pen would leave it).
  const content = useRef<HTMLElement>(null);
  useEffect(() => {
    if (editing) content.current?.querySelector<HTMLElement>('input:not([readonly]):not([disabled]):not([type="hidden"]), textarea:not([readonly]):not([disabled])')?.focus();
  }, [editing]);
  return (
    <Card component="section" aria-labelledby={headingId} sx={{ mb: 3, ...(aside ? withAsideSx : {}) }}>
      <Box ref={content} component={onSubmit ? 'form' : 'div'} noValidate={onSubmit ? true : undefined} onSubmit={onSubmit}>
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
      {aside && (
        <CardContent sx={{ pt: { xs: 0, lg: 2 }, gridColumn: { lg: 2 }, gridRow: { lg: '1 / span 2' }, alignSelf: 'start', position: { lg: 'sticky' }, top: { lg: 72 } }}>
          {aside}
        </CardContent>
      )}
    </Card>
  );
}
