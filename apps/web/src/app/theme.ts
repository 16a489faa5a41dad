import { BREAKPOINTS, DEFAULT_PRIMARY_COLOUR, TOOLBAR_HEIGHT_PX } from '@latchkey/contract';
import { createTheme } from '@mui/material/styles';

declare module '@mui/material/styles' {
  interface BreakpointOverrides {
    xxl: true;
  }
}

const READ_ONLY_TEXT = '#4A555E';

/**
 * The palette: dark navy primary, bright blue secondary, green success, red error. The bright blue fails
 * contrast as text on white, so it is used for fills with navy text on them, and a darker shade of it
 * carries links and outlined accents.
 */
export const theme = createTheme({
  breakpoints: { values: { ...BREAKPOINTS } },
  palette: {
    mode: 'light',
    primary: { main: DEFAULT_PRIMARY_COLOUR, contrastText: '#FFFFFF' },
    secondary: { main: '#45BDD1', dark: '#1F7A8C', contrastText: DEFAULT_PRIMARY_COLOUR },
    success: { main: '#2E7D32' },
    error: { main: '#C62828' },
    grey: { 100: '#F1F3F5', 300: '#DDE2E6', 500: '#8A949C', 700: '#4A555E' },
    background: { default: '#F4F7F9', paper: '#FFFFFF' },
    text: { primary: '#14212B', secondary: '#4A555E' },
  },
  shape: { borderRadius: 8 },
  typography: {
    fontFamily: '"Inter", "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
    h1: { fontSize: '2rem', fontWeight: 600 },
    h2: { fontSize: '1.5rem', fontWeight: 600 },
    h3: { fontSize: '1.25rem', fontWeight: 600 },
    button: { textTransform: 'none', fontWeight: 600 },
  },
  mixins: { toolbar: { minHeight: TOOLBAR_HEIGHT_PX } },
  components: {
    // Every input used to mount its own global style sheet with the two autofill keyframes (44 rules and
    // 11 style elements on the overview, inserted while it commits). They are global CSS, so they are in
    // the baseline once; the inputs keep the animation MUI listens to for autofill (labels shrink when the
    // browser fills a field).
    MuiCssBaseline: {
      styleOverrides: {
        '@keyframes mui-auto-fill': { from: { animationName: 'mui-auto-fill' } },
        '@keyframes mui-auto-fill-cancel': { from: { animationName: 'mui-auto-fill-cancel' } },
      },
    },
    MuiInputBase: {
      defaultProps: { disableInjectingGlobalStyles: true },
      styleOverrides: {
        input: {
          animationName: 'mui-auto-fill-cancel',
          animationDuration: '10ms',
          '&:-webkit-autofill': { animationDuration: '5000s', animationName: 'mui-auto-fill' },
          // Read-only values of a card not being edited are content, not switched-off controls: MUI's pale
          // 38 % grey fails contrast, this secondary text colour is 7.5:1 on white.
          '&.Mui-disabled': { color: READ_ONLY_TEXT, WebkitTextFillColor: READ_ONLY_TEXT },
        },
      },
    },
    MuiInputLabel: { styleOverrides: { root: { '&.Mui-disabled': { color: READ_ONLY_TEXT } } } },
    MuiFormHelperText: { styleOverrides: { root: { '&.Mui-disabled': { color: READ_ONLY_TEXT } } } },
    MuiFormControlLabel: { styleOverrides: { label: { '&.Mui-disabled': { color: READ_ONLY_TEXT } } } },
    MuiTextField: { defaultProps: { variant: 'outlined', fullWidth: true, margin: 'normal' } },
    MuiButton: { defaultProps: { disableElevation: true } },
    MuiCard: { defaultProps: { variant: 'outlined' } },
    MuiLink: { defaultProps: { underline: 'always', color: 'secondary.dark' } },
    MuiDialog: { defaultProps: { fullWidth: true, maxWidth: 'xs' } },
  },
});
