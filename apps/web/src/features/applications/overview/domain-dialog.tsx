import { corsBodySchema, issuerBodySchema } from '@latchkey/contract';
import { useTranslation } from 'react-i18next';
import { SingleFieldDialog } from '../../../components/ui/single-field-dialog';
import type { DomainKind } from '../auth-items-api';

/** Add an auth domain (http/https URL) or a CORS domain (https only), validated by the contract. */
export function DomainDialog({ kind, onCancel, onAdd }: { kind: DomainKind | null; onCancel: () => void; onAdd: (url: string) => Promise<string | null> }) {
  const { t } = useTranslation();
  const cors = kind === 'cors';
  return (
    <SingleFieldDialog
      open={kind !== null}
      titleId="domain-dialog-title"
      title={cors ? t('authCard.addCorsDomain') : t('authCard.addAuthDomain')}
      name="url"
      schema={cors ? corsBodySchema : issuerBodySchema}
      label={cors ? t('authCard.corsDomainInput') : t('authCard.authDomainInput')}
      type="url"
      onCancel={onCancel}
      onAdd={onAdd}
    />
  );
}
