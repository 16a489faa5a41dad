import { START_TILE_LOGO_HEIGHT_PX, type Application } from '@latchkey/contract';
import { Avatar, Box, Card, CardActionArea, Typography } from '@mui/material';
import { Link as RouterLink } from 'react-router';
import { paths } from '../../../app/paths';
import { readableTextOn } from '../../../lib/colour';

/** Spec §2: the logo 64 px high, or a circle with the first letter in the application's primary colour. */
export function ApplicationTile({ app }: { app: Application }) {
  const colour = app.emailPreferences.primaryColour;
  return (
    <Card sx={{ height: '100%' }}>
      <CardActionArea component={RouterLink} to={paths.overview(app.applicationId)} sx={tileSx}>
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
