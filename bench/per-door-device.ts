// One door for bench/per-door-costs.ts, in a process of its own so that its CPU is not the service's: the
// device package's DeviceAgent on the state directory given as argv[2], with the virtual actuator. Says
// {connected: true} over IPC once connected; {events: n} makes it report n door-sensor events (opened,
// closed, …), each signed and chained; 'stop' stops it.
import { DeviceAgent, StateDir, VirtualActuator, type Logger } from '@latchkey/device';

const quiet: Logger = { info: () => undefined, warn: () => undefined };
const agent = await DeviceAgent.start({ state: new StateDir(process.argv[2]!), actuator: new VirtualActuator(), firmware: 'bench', log: quiet });
const announce = () => process.send!({ connected: true });
if (agent.client.connected) announce();
else agent.client.once('connect', announce);

process.on('message', (message: 'stop' | { events: number }) => {
  if (message === 'stop') {
    void agent.stop().then(() => process.exit(0));
    return;
  }
  for (let i = 0; i < message.events; i++) agent.controller.report({ type: i % 2 === 0 ? 'door_opened' : 'door_closed' });
});
