import { Box, Button } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { LANGUAGES, setLanguage, type Language } from '../i18n';

// Each language is named in itself (and marked with its `lang`), so a reader finds theirs.
const choose = (language: Language) => void setLanguage(language, { remember: true });

/** The splash pages' language choice: a row of buttons, the current one pressed. */
export function LanguageButtons() {
  const { t, i18n } = useTranslation();
  return (
    <Box component="nav" aria-label={t('language.label')} sx={{ display: 'flex', justifyContent: 'center', gap: 0.5, mt: 2 }}>
      {LANGUAGES.map((language) => (
        <Button
          key={language}
          lang={language}
          size="small"
          aria-pressed={i18n.language === language}
          onClick={() => choose(language)}
          sx={{ fontWeight: i18n.language === language ? 700 : 400, textTransform: 'none' }}
        >
          {t(`language.names.${language}`)}
        </Button>
      ))}
    </Box>
  );
}
