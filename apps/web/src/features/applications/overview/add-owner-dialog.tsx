import { directoryQuerySchema, OWNER_DIALOG_MAX_WIDTH_PX, OWNER_DIALOG_MIN_WIDTH_PX } from '@latchkey/contract';
import { useTranslation } from 'react-i18next';
import { SingleFieldDialog } from '../../../components/ui/single-field-dialog';

/** Enter an email; Add stays disabled until it is a valid address. The lookup happens on Add. */
export function AddOwnerDialog({ open, onCancel, onAdd }: { open: boolean; onCancel: () => void; onAdd: (email: string) => Promise<string | null> }) {
  const { t } = useTranslation();
  return (
    <SingleFieldDialog
      open={open}
      titleId="add-owner-title"
      title={t('owners.addOwner')}
      name="email"
      schema={directoryQuerySchema}
      label={t('owners.ownerEmail')}
      type="email"
      paperSx={{ minWidth: { sm: OWNER_DIALOG_MIN_WIDTH_PX }, maxWidth: OWNER_DIALOG_MAX_WIDTH_PX }}
      onCancel={onCancel}
      onAdd={onAdd}
    />
  );
}
