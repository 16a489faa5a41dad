import { faPlus, faTrash } from '@fortawesome/free-solid-svg-icons';
import { Box, Button, IconButton, List, ListItem, ListItemText, Typography } from '@mui/material';
import { Icon } from '../../../components/ui/icon';

interface Props {
  id: string;
  title: string;
  /** What the list is, under its heading. */
  description?: string;
  empty: string;
  addLabel: string;
  urls: string[];
  /** A second line under a URL (an auth domain's discovery), or null. */
  secondary?: (url: string) => string | null;
  removeLabel: (url: string) => string;
  onAdd: () => void;
  onRemove: (url: string) => void;
}

export function DomainList({ id, title, description, empty, addLabel, urls, secondary, removeLabel, onAdd, onRemove }: Props) {
  return (
    <Box component="section" aria-labelledby={id} sx={{ mt: 3 }}>
      <Box sx={{ display: 'flex', alignItems: 'center', flexWrap: 'wrap', gap: 1 }}>
        <Typography id={id} variant="h3" sx={{ flexGrow: 1 }}>
          {title}
        </Typography>
        <Button variant="outlined" onClick={onAdd} startIcon={<Icon icon={faPlus} />}>
          {addLabel}
        </Button>
      </Box>
      {description && (
        <Typography color="text.secondary" sx={{ mt: 0.5 }}>
          {description}
        </Typography>
      )}
      {urls.length === 0 ? (
        <Typography color="text.secondary" sx={{ mt: 1 }}>
          {empty}
        </Typography>
      ) : (
        <List aria-labelledby={id} dense>
          {urls.map((url) => (
            <ListItem
              key={url}
              divider
              secondaryAction={
                <IconButton edge="end" aria-label={removeLabel(url)} onClick={() => onRemove(url)}>
                  <Icon icon={faTrash} />
                </IconButton>
              }
            >
              <ListItemText
                primary={url}
                secondary={secondary?.(url) ?? undefined}
                slotProps={{ primary: { sx: { wordBreak: 'break-all' } }, secondary: { sx: { wordBreak: 'break-all' } } }}
              />
            </ListItem>
          ))}
        </List>
      )}
    </Box>
  );
}
