import { Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, Typography } from '@mui/material';
import { useId } from 'react';
import { useOpenedOnce } from './use-opened-once';

export interface MessageDialogProps {
  open: boolean;
  title: string;
  message?: string;
  subtitle?: string;
  buttonLabel: string;
  onClose: () => void;
  tone?: 'success' | 'error' | 'info';
}

/** One-button dialog for successes and failures ('Success', 'Failed', the login error catalogue). */
export function MessageDialog({ open, title, message, subtitle, buttonLabel, onClose, tone = 'info' }: MessageDialogProps) {
  const titleId = useId();
  const textId = useId();
  // Nothing until first opened: every operation's Failed and Success dialogs cost a page nothing until used.
  if (!useOpenedOnce(open)) return null;
  return (
    <Dialog
      open={open}
      onClose={onClose}
      aria-labelledby={titleId}
      aria-describedby={message ? textId : undefined}
      role={tone === 'error' ? 'alertdialog' : 'dialog'}
    >
      <DialogTitle id={titleId} sx={{ color: tone === 'error' ? 'error.main' : tone === 'success' ? 'success.main' : undefined }}>
        {title}
      </DialogTitle>
      <DialogContent>
        {subtitle && (
          <Typography variant="subtitle2" color="text.secondary" sx={{ mb: 1 }}>
            {subtitle}
          </Typography>
        )}
        {message && <DialogContentText id={textId}>{message}</DialogContentText>}
      </DialogContent>
      <DialogActions>
        <Button variant="contained" onClick={onClose} autoFocus>
          {buttonLabel}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
