import { CssBaseline } from '@mui/material';
import { ThemeProvider } from '@mui/system';
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { I18nextProvider } from 'react-i18next';
import { i18n } from './i18n';
import { theme } from './theme';

export { createQueryClient } from './query-client';

/**
 * What every screen needs from its first paint, /login included: translations and the theme.
 * @mui/system's ThemeProvider is the one Material's own hands a theme without CSS variables to (ours);
 * Material's wrapper also imports the CSS-variables provider and colour-scheme script, 3 KB gzip unused.
 */
export function ShellProviders({ children }: { children: ReactNode }) {
  return (
    <I18nextProvider i18n={i18n}>
      <ThemeProvider theme={theme}>
        <CssBaseline />
        {children}
      </ThemeProvider>
    </I18nextProvider>
  );
}

/**
 * Everything a screen sees once its route has loaded, for rendering one screen on its own (tests). In the
 * app the query cache comes from the lazily loaded QueryLayout route instead, so /login carries none of it.
 */
export function AppProviders({ children, queryClient }: { children: ReactNode; queryClient: QueryClient }) {
  return (
    <ShellProviders>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </ShellProviders>
  );
}
