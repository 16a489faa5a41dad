import { faTrash, faUserPlus } from '@fortawesome/free-solid-svg-icons';
import type { Owner } from '@latchkey/contract';
import { Box, Button, IconButton, List, ListItem, ListItemText, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog } from '../../../components/ui/confirm-dialog';
import { Icon } from '../../../components/ui/icon';
import { useOperation } from '../../../components/ui/use-operation';
import { currentUserId } from '../../../lib/session';
import { errorMessage } from '../../../lib/http';
import { useAddOwner, useInviteOwner, useOwners, useRemoveOwner } from '../owners-api';
import { AddOwnerDialog } from './add-owner-dialog';

class OwnerNotFound extends Error {}

/** Owners of the application; add/remove only while the Application card is in edit mode. */
export function OwnersSection({ applicationId, editing }: { applicationId: string; editing: boolean }) {
  const { t } = useTranslation();
  const owners = useOwners(applicationId);
  const add = useAddOwner(applicationId);
  const remove = useRemoveOwner(applicationId);
  const invite = useInviteOwner(applicationId);
  const op = useOperation();
  const [adding, setAdding] = useState(false);
  /** An email with no account behind it: the offer to invite them instead. */
  const [inviting, setInviting] = useState<string | null>(null);
  const [removing, setRemoving] = useState<Owner | null>(null);
  const me = currentUserId();

  // The add dialog stays open (with the typed email) until the add succeeds, so a miss loses nothing.
  // An email with no account is not a dead end: the owner is offered to invite them.
  const onAdd = async (email: string) => {
    const result = await op.run(
      async () => {
        if ((await add.mutateAsync(email)) === 'not-found') throw new OwnerNotFound();
      },
      {
        notice: true,
        failureMessage: (e) => (e instanceof OwnerNotFound ? t('owners.notFound') : t('owners.addFailed')),
        inPlace: () => true,
      },
    );
    if (!result.ok && result.error instanceof OwnerNotFound) {
      setAdding(false);
      setInviting(email);
      return null;
    }
    if (!result.ok) return result.message;
    setAdding(false);
    return null;
  };

  const onInvite = async (email: string) => {
    setInviting(null);
    await op.run(() => invite.mutateAsync(email), { notice: t('owners.invited', { email }), failureMessage: (e) => errorMessage(e) });
  };

  const onRemove = async (owner: Owner) => {
    setRemoving(null);
    await op.run(() => remove.mutateAsync(owner.userId), { notice: t('common.removed'), failureMessage: t('owners.removeFailed') });
  };

  return (
    <Box component="section" aria-labelledby="owners-title">
      <Box sx={{ display: 'flex', alignItems: 'center', mt: 1 }}>
        <Typography id="owners-title" variant="h3" sx={{ flexGrow: 1 }}>
          {t('owners.title')}
        </Typography>
        <Button variant="outlined" disabled={!editing} onClick={() => setAdding(true)} startIcon={<Icon icon={faUserPlus} />}>
          {t('owners.addOwner')}
        </Button>
      </Box>
      {!editing && (
        <Typography variant="body2" color="text.secondary">
          {t('owners.editHint')}
        </Typography>
      )}
      {/* A failed owner list is left empty; the section stays usable. */}
      <List aria-labelledby="owners-title">
        {(owners.data ?? []).map((owner) => {
          const isMe = owner.userId === me;
          return (
            <ListItem
              key={owner.userId}
              divider
              secondaryAction={
                isMe ? undefined : (
                  <IconButton
                    edge="end"
                    aria-label={t('owners.removeOwnerLabel', { email: owner.email })}
                    disabled={!editing}
                    onClick={() => setRemoving(owner)}
                  >
                    <Icon icon={faTrash} />
                  </IconButton>
                )
              }
            >
              <ListItemText
                primary={`${owner.displayName ?? owner.email}${isMe ? ` ${t('owners.you')}` : ''}`}
                secondary={owner.displayName ? owner.email : undefined}
              />
            </ListItem>
          );
        })}
      </List>
      <AddOwnerDialog open={adding} onCancel={() => setAdding(false)} onAdd={onAdd} />
      <ConfirmDialog
        open={inviting !== null}
        title={t('owners.inviteTitle', { email: inviting ?? '' })}
        message={t('owners.inviteMessage')}
        confirmLabel={t('owners.inviteButton')}
        cancelLabel={t('common.cancel')}
        destructive={false}
        onConfirm={() => inviting && void onInvite(inviting)}
        onCancel={() => setInviting(null)}
      />
      <ConfirmDialog
        open={removing !== null}
        title={t('owners.removeConfirm')}
        message={removing?.email}
        confirmLabel={t('common.remove')}
        cancelLabel={t('common.cancel')}
        onConfirm={() => removing && void onRemove(removing)}
        onCancel={() => setRemoving(null)}
      />
      {op.dialogs}
    </Box>
  );
}
