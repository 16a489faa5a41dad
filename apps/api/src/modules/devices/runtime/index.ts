/** What the device runtime shares with the sandbox locks' virtual devices (modules/devices/virtual). */
export { lockConfigContent } from './config-content.js';
/** A virtual lock's events are logged as a device's are (device-events.ts). */
export { logLockEvent, type EventLock } from './device-events.js';
