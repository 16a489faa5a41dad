import { faCheck } from '@fortawesome/free-solid-svg-icons';
import { ListItemIcon, ListItemText, ListSubheader, MenuItem } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/ui/icon';
import { LANGUAGES, setLanguage, type Language } from '../i18n';

// Each language is named in itself (and marked with its `lang`), so a reader finds theirs whatever the
// page is in now. The splash pages have their own row of buttons (language-buttons.tsx): a menu's parts
// would weigh on /login.
const choose = (language: Language) => void setLanguage(language, { remember: true });

/** The user menu's language choice: one item per language, the current one checked. */
export function LanguageMenuItems({ onChosen }: { onChosen: () => void }) {
  const { t, i18n } = useTranslation();
  return [
    // Presentational: a menu owns only menu items (axe aria-required-children); the label stays visible.
    <ListSubheader key="label" role="presentation" sx={{ lineHeight: 2.5 }}>
      {t('language.label')}
    </ListSubheader>,
    ...LANGUAGES.map((language) => (
      <MenuItem
        key={language}
        lang={language}
        selected={i18n.language === language}
        onClick={() => {
          onChosen();
          choose(language);
        }}
      >
        <ListItemIcon>{i18n.language === language && <Icon icon={faCheck} />}</ListItemIcon>
        <ListItemText>{t(`language.names.${language}`)}</ListItemText>
      </MenuItem>
    )),
  ];
}
