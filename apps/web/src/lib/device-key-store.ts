/**
 * Where the portal keeps its signing key for lock operations: IndexedDB, because it can hold a
 * CryptoKey object as it is (localStorage only holds strings, which a non-extractable key never becomes).
 * One record per signed-in portal user, with the certificate /auth/certificate issued for its public key.
 */
export interface DeviceKeyRecord {
  privateKey: CryptoKey;
  /** Raw Ed25519 public key, standard base64 (what /auth/certificate was sent). */
  publicKey: string;
  certificate: { chain: string[]; userId: string; issuedAtMs: number } | null;
}

export interface DeviceKeyStore {
  get(owner: string): Promise<DeviceKeyRecord | undefined>;
  put(owner: string, record: DeviceKeyRecord): Promise<void>;
  clear(): Promise<void>;
}

const DB_NAME = 'latchkey';
const STORE = 'device-keys';

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(DB_NAME, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(STORE);
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error ?? new Error('IndexedDB is not available'));
  });
}

async function run<T>(mode: IDBTransactionMode, act: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await openDb();
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = act(tx.objectStore(STORE));
      // Resolve on the transaction's completion, so a put has been committed when the caller goes on.
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
      tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
    });
  } finally {
    db.close();
  }
}

export const indexedDbKeyStore: DeviceKeyStore = {
  get: (owner) => run('readonly', (s) => s.get(owner) as IDBRequest<DeviceKeyRecord | undefined>),
  put: async (owner, record) => void (await run('readwrite', (s) => s.put(record, owner))),
  clear: async () => void (await run('readwrite', (s) => s.clear())),
};

/** For tests and browsers without IndexedDB (private modes of some): the key lives as long as the page. */
export function memoryKeyStore(): DeviceKeyStore {
  const records = new Map<string, DeviceKeyRecord>();
  return {
    get: async (owner) => records.get(owner),
    put: async (owner, record) => void records.set(owner, record),
    clear: async () => records.clear(),
  };
}
