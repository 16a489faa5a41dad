/**
 * How the service talks to devices, whichever broker carries the messages: the embedded Aedes broker
 * (the default) or an external one named by MQTT_URL, which every instance joins as a client with its
 * own certificate. Modules use only this; the topics are the contract's (`deviceTopic`).
 */
export interface DeviceBus {
  /** `embedded`: this process is the broker; `external`: a client of MQTT_URL. */
  readonly kind: 'embedded' | 'external';
  /** Publishes with QoS 1; resolves once the broker has taken it. */
  publish(topic: string, payload: string | Buffer, options?: { retain?: boolean }): Promise<void>;
  /**
   * Calls `handler` for every message on a topic matching `pattern` (MQTT wildcards `+` and `#`),
   * retained ones included. Messages a device publishes outside its own prefix never arrive here.
   */
  subscribe(pattern: string, handler: (topic: string, payload: Buffer) => void): Promise<void>;
  /**
   * Ends a device's connection at once, on whichever instance's embedded broker holds it (with an external
   * broker the CRL does it, at the device's next connect).
   */
  disconnect(deviceId: string): void;
  close(): Promise<void>;
}
