/**
 * @latchkey/device: a Latchkey lock controller. The same code runs on a door (the `latchkey-device`
 * command: provisioning, the MQTT agent, a relay through a configured program) and inside the platform,
 * where every sandbox lock is a LockController with a VirtualActuator.
 *
 *   const lock = new LockController({ lockId, platformCa: caPem });
 *   lock.setConfig(config);                  // or lock.applyConfig(configJws) for a signed one
 *   const result = await lock.handle(jws);   // { outcome: 'DONE' | 'REFUSED', reason?, reasonKey?, state }
 *   lock.on('state', ({ locked, unlockedUntil }) => …);
 */
export {
  checkOfflineAccessCode,
  hashAccessCode,
  Keypad,
  keypadRefusals,
  offlineAccessCode,
  OFFLINE_CODE_DIGITS,
  OFFLINE_CODE_MAX_HOURS,
  type KeypadOptions,
  type KeypadSnapshot,
  type OfflineCodeCheck,
} from './access-codes.js';
export { EventLog, eventAlgorithm, eventHash, signEvent, MAX_QUEUED_EVENTS, type QueuedEvent } from './event-log.js';
export { LockController, type CodeResult, type HandleResult, type LockControllerOptions, type LockEvent, type LockState, type SensorReport } from './controller.js';
export { verifyConfig, verifyOperation, type ConfigTrust, type OperationContext, type Verdict, type VerifiedOperation } from './checks.js';
export { PlatformTrust, type IssuedLeaf } from './trust.js';
export { ReplayCache } from './replay-cache.js';
export { CommandActuator, VirtualActuator, type Actuator, type CommandActuatorOptions } from './actuators.js';
export { checkUsageRequirements, isWithinTimeRule } from '@latchkey/contract';
export { checkUserTerms } from './rules.js';
export { deviceRefusals, lockRefusals } from './refusals.js';
export { DeviceAgent, type AgentOptions, type Logger } from './agent.js';
export { createKeyAndCsr, provision, saveProvisioning, type KeyAndCsr, type ProvisionOptions } from './provision.js';
export { StateDir, defaultStateDir, loadDevice, type DeviceFiles, type DeviceIdentity } from './state-dir.js';
