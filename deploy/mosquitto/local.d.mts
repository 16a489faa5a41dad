/** Writes deploy/mosquitto's configuration for a local run into `dir`; answers the configuration's path. */
export function writeLocalMosquittoConfig(dir: string, material: { port: number; servicePort?: number; ca: string; cert: string; key: string; crl: string }): string;
