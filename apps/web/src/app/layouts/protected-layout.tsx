import { Box } from '@mui/material';
import { Navigate, Outlet } from 'react-router';
import { SavedNoticeHost } from '../../components/ui/saved-notice';
import { useSession } from '../../lib/use-session';
import { paths } from '../../lib/paths';
import { VerifyEmailBanner } from '../../features/auth/verify-email-banner';
import { AppToolbar } from './app-toolbar';

/** Signed-in area. The loader guards navigation; this also reacts when a failed refresh ends the session mid-page. */
export function ProtectedLayout() {
  const session = useSession();
  if (!session.token) return <Navigate to={paths.login} replace />;
  return (
    <Box sx={{ minHeight: '100vh', bgcolor: 'background.default' }}>
      <AppToolbar />
      <VerifyEmailBanner />
      <Outlet />
      {/* The one 'Saved' notice of the signed-in pages, wherever a save happens. */}
      <SavedNoticeHost />
    </Box>
  );
}
