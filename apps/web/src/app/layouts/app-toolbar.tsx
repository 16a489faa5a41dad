import { faCircleUser, faDoorClosed, faRightFromBracket, faUserGear } from '@fortawesome/free-solid-svg-icons';
import {
  AppBar,
  Box,
  Button,
  Container,
  Divider,
  ListItemIcon,
  Menu,
  MenuItem,
  Toolbar,
  Typography,
} from '@mui/material';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useParams } from 'react-router';
import { Icon } from '../../components/ui/icon';
import { ProductLogo } from '../../components/ui/product-logo';
import { useApplication } from '../../features/applications/api';
import { useLogout } from '../../features/auth/logout';
import { useSession } from '../../lib/use-session';
import { paths } from '../../lib/paths';
import { LanguageMenuItems } from './language-menu-items';

/** The top toolbar; minimal (no application name) outside an application. */
export function AppToolbar() {
  const { t } = useTranslation();
  const { appId } = useParams();
  const session = useSession();
  const app = useApplication(appId);
  const logout = useLogout();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const menuId = useId();

  return (
    <AppBar position="sticky" color="primary" elevation={0} component="header">
      {/* The same width and gutters as the page's content below, so both line up on a wide screen. */}
      <Container maxWidth="lg" sx={{ px: { xs: 1, sm: 2, md: 3 } }}>
        <Toolbar disableGutters sx={{ gap: { xs: 1, sm: 2 } }}>
          <Box
            component={RouterLink}
            to={paths.home}
            aria-label={t('common.homeLink')}
            sx={{ display: 'flex', textDecoration: 'none' }}
          >
            <ProductLogo tone="light" />
          </Box>
          {appId && app.data && (
            <>
              <Divider
                orientation="vertical"
                flexItem
                sx={{ borderColor: 'rgba(255,255,255,0.4)', my: 1.5 }}
              />
              <Typography component="p" noWrap sx={{ minWidth: 0, flexShrink: 1 }}>
                {app.data.name}
              </Typography>
            </>
          )}
          <Box sx={{ flexGrow: 1 }} />
          <Button
            color="inherit"
            aria-label={t('auth.userMenu')}
            aria-haspopup="menu"
            aria-controls={anchor ? menuId : undefined}
            aria-expanded={anchor ? 'true' : undefined}
            onClick={(e) => setAnchor(e.currentTarget)}
            startIcon={<Icon icon={faCircleUser} />}
            sx={{ minWidth: 0, maxWidth: { xs: 48, sm: 320 }, overflow: 'hidden' }}
          >
            <Typography
              component="span"
              noWrap
              sx={{ display: { xs: 'none', sm: 'inline' }, fontWeight: 600 }}
            >
              {session.displayName ?? session.email}
            </Typography>
          </Button>
          <Menu id={menuId} anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
            {/* Who is signed in; presentational, as a menu owns only menu items (axe aria-required-children). */}
            <Box component="li" role="presentation" sx={{ px: 2, py: 1 }}>
              {session.displayName && <Typography sx={{ fontWeight: 600 }}>{session.displayName}</Typography>}
              {session.email && <Typography color="text.secondary">{session.email}</Typography>}
            </Box>
            <Divider />
            {LanguageMenuItems({ onChosen: () => setAnchor(null) })}
            <Divider />
            <MenuItem component={RouterLink} to={paths.account} onClick={() => setAnchor(null)}>
              <ListItemIcon>
                <Icon icon={faUserGear} />
              </ListItemIcon>
              {t('account.menu')}
            </MenuItem>
            <MenuItem
              onClick={() => {
                setAnchor(null);
                void logout();
              }}
            >
              <ListItemIcon>
                <Icon icon={faRightFromBracket} />
              </ListItemIcon>
              {t('auth.logout')}
            </MenuItem>
            <MenuItem
              onClick={() => {
                setAnchor(null);
                void logout({ everywhere: true });
              }}
            >
              <ListItemIcon>
                <Icon icon={faDoorClosed} />
              </ListItemIcon>
              {t('signOutEverywhere.action')}
            </MenuItem>
          </Menu>
        </Toolbar>
      </Container>
    </AppBar>
  );
}
