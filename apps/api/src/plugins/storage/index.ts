import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { SecretBox } from '../../lib/secret-box.js';
import { LocalLogoStorage, loadUploadSecret } from './local.js';
import { S3LogoStorage } from './s3.js';
import type { LogoStorage } from './storage.js';

export * from './storage.js';

/** The configured driver: local disk by default, S3-compatible when STORAGE_DRIVER=s3. */
export async function createLogoStorage(config: Config, db: Db): Promise<LogoStorage> {
  const storage = config.storage;
  if (storage.driver === 's3') {
    if (!storage.s3.bucket) throw new Error('STORAGE_DRIVER=s3 needs S3_BUCKET');
    return new S3LogoStorage({
      bucket: storage.s3.bucket,
      region: storage.s3.region,
      endpoint: storage.s3.endpoint,
      forcePathStyle: storage.s3.forcePathStyle,
      accessKeyId: storage.s3.accessKeyId,
      secretAccessKey: storage.s3.secretAccessKey,
      cdnBaseUrl: storage.cdnBaseUrl,
      ttlSeconds: storage.uploadTtl,
    });
  }
  return new LocalLogoStorage({
    publicUrl: config.publicUrl,
    apiPrefix: config.apiPrefix,
    cdnBaseUrl: storage.cdnBaseUrl,
    dataDir: config.dataDir,
    secret: await loadUploadSecret(db, new SecretBox(config.secretsEncryptionKey), config.dataDir, storage.signingSecret),
    ttlSeconds: storage.uploadTtl,
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Logo storage, created from config in app.ts. */
    storage: LogoStorage;
  }
}
