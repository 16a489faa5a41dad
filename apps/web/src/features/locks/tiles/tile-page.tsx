import { zodResolver } from '@hookform/resolvers/zod';
import { TILE_SIGN_IN_TTL_MINUTES, tileSignInSchema, type Lock, type TileSignInResponse } from '@latchkey/contract';
import { Alert, Box, Button, Container, Typography } from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { LanguageButtons } from '../../../app/layouts/language-buttons';
import { FormTextField } from '../../../components/ui/form-text-field';
import { PageLoader } from '../../../components/ui/page-loader';
import { SectionCard } from '../../../components/ui/section-card';
import { ApiError, errorMessage } from '../../../lib/http';
import { getSession, subscribeSession } from '../../../lib/session';
import { useLinkSecrets } from '../../../lib/use-link-secrets';
import { LockStateChip } from '../lock-state';
import { UnlockButton } from '../lock/unlock-button';
import type { UnlockDeps } from '../unlock-api';
import { certifyAsTileUser, executeAsTileUser, requestTileSignIn, useTileBranding, useTileLocks, verifyTileSignIn } from './api';
import { forgetTileSignIn, getTileSignIn, storeTileSignIn } from './tile-session';

const SIGN_IN_LINK = ['signin'] as const;

/**
 * /t/{tileId}: what a phone opens from a tile's QR code. Whoever may open the doors behind the tile sees
 * them and unlocks one from the browser, with the lock page's own Unlock (its signed operation and
 * whatever checks it asks for): the portal's signed-in owner, or a person a lock is shared with, who signs
 * in here with a one-time link emailed to the address it was shared with (`#signin=` brings it back). A
 * tile with nothing for them says so.
 */
export function TilePage() {
  const { t } = useTranslation();
  const { tileId = '' } = useParams();
  const queryClient = useQueryClient();
  const session = useSyncExternalStore(subscribeSession, getSession);
  const [signIn, setSignIn] = useState<TileSignInResponse | null>(() => getTileSignIn());
  const [exchanging, setExchanging] = useState(false);
  const [linkError, setLinkError] = useState<string | null>(null);

  // The emailed link (its secret in the fragment, never sent to a server): the secret leaves the address bar
  // at once and is spent once, for a lock-user token.
  const linkSecret = useLinkSecrets(SIGN_IN_LINK).signin;
  const spent = useRef<string | null>(null);
  useEffect(() => {
    if (!linkSecret || spent.current === linkSecret) return;
    spent.current = linkSecret;
    setExchanging(true);
    setLinkError(null);
    verifyTileSignIn(linkSecret)
      .then((signedIn) => {
        storeTileSignIn(signedIn);
        setSignIn(signedIn);
      })
      .catch((e: unknown) => setLinkError(errorMessage(e)))
      .finally(() => setExchanging(false));
  }, [linkSecret]);

  const portalSignedIn = Boolean(session.token || session.refreshToken);
  const who = signIn ? { bearer: signIn.authToken, userId: signIn.userId } : portalSignedIn ? { userId: 'portal' } : null;
  const locks = useTileLocks(tileId, who);
  const branding = useTileBranding(tileId);

  const signOut = () => {
    forgetTileSignIn();
    setSignIn(null);
    queryClient.removeQueries({ queryKey: ['tile', tileId] });
  };
  // The lock-user token expired or its user is gone: back to the email form.
  const refused = signIn !== null && locks.error instanceof ApiError && locks.error.status === 401;
  useEffect(() => {
    if (refused) signOut();
  });

  const unlockAs = useMemo<UnlockDeps | undefined>(
    () =>
      signIn
        ? {
            as: {
              keyOwner: `tile-user:${signIn.userId}`,
              certify: (ephemeralKey) => certifyAsTileUser(signIn.authToken, ephemeralKey),
              execute: (lockId, jws) => executeAsTileUser(signIn.authToken, lockId, jws),
            },
          }
        : undefined,
    [signIn],
  );

  if (exchanging || (who !== null && locks.isPending)) return <PageLoader />;
  const nothingHere = locks.error instanceof ApiError && locks.error.status === 404;
  return (
    <Container component="main" maxWidth="sm" sx={{ py: { xs: 2, sm: 4 } }}>
      {/* Whose door it is, in the application's own name and logo. Its line is there from the start, so
          nothing moves when the branding arrives. */}
      <Box
        sx={{ display: 'flex', alignItems: 'center', gap: 1.5, minHeight: 48, mb: 1, pl: 1.5, borderLeft: 4, borderColor: branding.data?.primaryColour ?? 'transparent' }}
      >
        {branding.data?.logoUrl && (
          <Box component="img" src={branding.data.logoUrl} alt="" sx={{ height: 40, maxWidth: 160, objectFit: 'contain' }} />
        )}
        {branding.data && (
          <Typography component="p" variant="h6" sx={{ fontWeight: 600, overflowWrap: 'anywhere' }}>
            {branding.data.name}
          </Typography>
        )}
      </Box>
      <Typography variant="h1" sx={{ mb: 2, overflowWrap: 'anywhere' }}>
        {t('tiles.pageTitle')}
      </Typography>
      {who === null ? (
        <>
          {linkError && (
            <Alert severity="error" sx={{ mb: 2 }}>
              {linkError}
            </Alert>
          )}
          <SignInForm tileId={tileId} />
          <LanguageButtons />
        </>
      ) : (
        <>
          {locks.isError && !refused && (
            <Alert severity={nothingHere ? 'info' : 'error'} sx={{ mb: 2 }}>
              {nothingHere ? t('tiles.nothingHere') : errorMessage(locks.error)}
            </Alert>
          )}
          <Box sx={{ display: 'grid', gap: 2 }}>
            {locks.data?.map((lock) => (
              <Door key={lock.id} lock={lock} deps={unlockAs} onSettled={() => void locks.refetch()} />
            ))}
          </Box>
          {signIn && (
            <Box sx={{ mt: 3, display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 1 }}>
              <Typography variant="body2" color="text.secondary" sx={{ flex: '1 1 12rem' }}>
                {t('tiles.signedInHint')}
              </Typography>
              <Button variant="outlined" onClick={signOut}>
                {t('tiles.signOut')}
              </Button>
            </Box>
          )}
        </>
      )}
    </Container>
  );
}

function Door({ lock, deps, onSettled }: { lock: Lock; deps?: UnlockDeps; onSettled: () => void }) {
  const { t } = useTranslation();
  return (
    <SectionCard headingId={`door-${lock.id}`} title={lock.name} headerGap={1}>
      <Box sx={{ mb: 2 }}>
        <LockStateChip state={lock.state} />
      </Box>
      <UnlockButton lock={lock} deps={deps} onSettled={onSettled} help={t('tiles.unlockHelp')} />
    </SectionCard>
  );
}

/**
 * Signed out: the address a lock was shared with. The answer is the same whether or not a link is sent
 * (no one learns which addresses have keys), so the page always says to check the inbox.
 */
function SignInForm({ tileId }: { tileId: string }) {
  const { t } = useTranslation();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const form = useForm({ resolver: zodResolver(tileSignInSchema), defaultValues: { email: '' }, mode: 'onTouched' });

  const onSubmit = form.handleSubmit(async ({ email }) => {
    setError(null);
    try {
      await requestTileSignIn(tileId, email);
      setSentTo(email);
    } catch (e) {
      setError(errorMessage(e));
    }
  });

  if (sentTo)
    return (
      <SectionCard headingId="tile-check-email" title={t('tiles.checkEmail')} headerGap={1}>
        <Typography role="status" sx={{ mb: 2, overflowWrap: 'anywhere' }}>
          {t('tiles.checkEmailText', { email: sentTo, minutes: TILE_SIGN_IN_TTL_MINUTES })}
        </Typography>
        <Button variant="outlined" onClick={() => setSentTo(null)}>
          {t('tiles.otherAddress')}
        </Button>
      </SectionCard>
    );
  return (
    <SectionCard headingId="tile-sign-in" title={t('tiles.signInTitle')} headerGap={1}>
      <Box component="form" noValidate onSubmit={onSubmit}>
        <Typography sx={{ mb: 1 }}>{t('tiles.signInIntro')}</Typography>
        <FormTextField control={form.control} name="email" label={t('tiles.email')} type="email" autoComplete="email" required />
        {error && (
          <Alert severity="error" sx={{ mt: 1 }}>
            {error}
          </Alert>
        )}
        <Button type="submit" variant="contained" size="large" fullWidth disabled={form.formState.isSubmitting} sx={{ mt: 2 }}>
          {form.formState.isSubmitting ? t('tiles.sending') : t('tiles.sendLink')}
        </Button>
      </Box>
    </SectionCard>
  );
}
