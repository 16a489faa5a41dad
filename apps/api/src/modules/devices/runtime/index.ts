/** What the device runtime shares with the sandbox locks' virtual devices (modules/devices/virtual). */
export { lockConfigContent } from './config-publisher.js';
