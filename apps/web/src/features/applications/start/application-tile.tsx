import { START_TILE_LOGO_HEIGHT_PX, type Application } from '@latchkey/contract';
import { Avatar, Box, Button, Card, CardActionArea, CardActions, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { paths } from '../../../lib/paths';
import { readableTextOn } from '../../../lib/colour';
import { useMissingSteps } from '../components/unfinished-setup';

/** The logo 64 px high, or a circle with the first letter in the application's primary colour. */
export function ApplicationTile({ app }: { app: Application }) {
  const { t } = useTranslation();
  const colour = app.emailPreferences.primaryColour;
  const missing = useMissingSteps(app);
  return (
    <Card sx={{ height: '100%', display: 'flex', flexDirection: 'column' }}>
      <CardActionArea component={RouterLink} to={paths.overview(app.applicationId)} sx={{ ...tileSx, height: 'auto', flexGrow: 1 }}>
        <Box sx={{ height: START_TILE_LOGO_HEIGHT_PX, display: 'flex', alignItems: 'center' }}>
          {app.logoUrl ? (
            <Box
              component="img"
              src={app.logoUrl}
              alt=""
              sx={{ height: START_TILE_LOGO_HEIGHT_PX, maxWidth: '100%', objectFit: 'contain' }}
            />
          ) : (
            <Avatar
              aria-hidden
              sx={{ width: START_TILE_LOGO_HEIGHT_PX, height: START_TILE_LOGO_HEIGHT_PX, bgcolor: colour, color: readableTextOn(colour), fontSize: 28 }}
            >
              {app.name.trim().charAt(0).toUpperCase()}
            </Avatar>
          )}
        </Box>
        <Typography component="span" sx={{ fontWeight: 600, mt: 2, textAlign: 'center', wordBreak: 'break-word' }}>
          {app.name}
        </Typography>
      </CardActionArea>
      {/* Outside the tile's link: a link may not hold another. */}
      {missing.length > 0 && (
        <CardActions sx={{ flexDirection: 'column', alignItems: 'stretch', gap: 1, pt: 0, px: 2, pb: 2 }}>
          <Typography variant="body2" color="text.secondary" sx={{ textAlign: 'center' }}>
            {t('setup.missing', { steps: missing.join(', ') })}
          </Typography>
          <Button component={RouterLink} to={paths.resumeApplication(app.applicationId)} size="small" variant="outlined" sx={{ m: '0 !important' }}>
            {t('setup.resume')}
          </Button>
        </CardActions>
      )}
    </Card>
  );
}

export const tileSx = {
  height: '100%',
  minHeight: 168,
  display: 'flex',
  flexDirection: 'column',
  alignItems: 'center',
  justifyContent: 'center',
  p: 2,
} as const;
