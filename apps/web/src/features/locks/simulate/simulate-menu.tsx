import { faFlask } from '@fortawesome/free-solid-svg-icons';
import { SIMULATED_EVENTS, type SimulatedEvent } from '@latchkey/contract';
import { Button, Divider, Menu, MenuItem } from '@mui/material';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../../components/ui/icon';
import { lazyPart } from '../../../components/ui/lazy-part';
import { useOpenedOnce } from '../../../components/ui/use-opened-once';
import { useOperation } from '../../../components/ui/use-operation';
import { useSimulateEvent } from './api';

const KeypadDialog = lazyPart(() => import('./keypad-dialog').then((m) => m.KeypadDialog));
const BatteryDialog = lazyPart(() => import('./battery-dialog').then((m) => m.BatteryDialog));
/** What the menu opens: the lock page fetches them once its cards are drawn. */
export const SIMULATE_MENU_PARTS = [KeypadDialog, BatteryDialog];

/**
 * What a real door would report, made to happen on a virtual lock: a code typed at its keypad, its door
 * opening and closing, its battery, its alarms, and it going offline and coming back. Each shows in the
 * lock's state and activity as a device's would.
 */
export function SimulateMenu({ appId, lockId }: { appId: string; lockId: string }) {
  const { t } = useTranslation();
  const menuId = useId();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  // The menu is drawn from its first opening on: a closed one still rendered its popover on every page load.
  const menuOpened = useOpenedOnce(anchor !== null);
  const [dialog, setDialog] = useState<'keypad' | 'battery' | null>(null);
  const simulate = useSimulateEvent(appId, lockId);
  const { run, dialogs } = useOperation();

  const send = (event: SimulatedEvent, value?: number) =>
    void run(() => simulate.mutateAsync({ event, value }), {
      notice: t(`simulate.sent.${event}`, { value: value ?? 0 }),
    });
  const pick = (what: SimulatedEvent | 'keypad') => {
    setAnchor(null);
    if (what === 'keypad' || what === 'battery') setDialog(what);
    else send(what);
  };

  return (
    <>
      <Button
        variant="outlined"
        startIcon={<Icon icon={faFlask} />}
        aria-haspopup="menu"
        aria-expanded={anchor !== null}
        aria-controls={anchor ? menuId : undefined}
        onClick={(e) => setAnchor(e.currentTarget)}
      >
        {t('simulate.button')}
      </Button>
      {menuOpened && (
        <Menu id={menuId} anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
          <MenuItem onClick={() => pick('keypad')}>{t('simulate.items.keypad')}</MenuItem>
          <Divider component="li" />
          {SIMULATED_EVENTS.map((event) => (
            <MenuItem key={event} onClick={() => pick(event)}>
              {t(`simulate.items.${event}`)}
            </MenuItem>
          ))}
        </Menu>
      )}
      {dialog === 'keypad' && <KeypadDialog appId={appId} lockId={lockId} onClose={() => setDialog(null)} />}
      {dialog === 'battery' && (
        <BatteryDialog onClose={() => setDialog(null)} onReport={(value) => (setDialog(null), send('battery', value))} />
      )}
      {dialogs}
    </>
  );
}
