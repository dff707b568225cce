import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { slot } from '../state';

/**
 * Secrets at rest (docs/security.md): AES-256-GCM from node:crypto under keys from
 * SECRET_ENCRYPTION_KEYS (newest first). The newest key encrypts; every listed key decrypts,
 * so keys rotate by putting a new one first and re-encrypting (`npm run admin --
 * reencrypt-secrets`) before the old one is dropped.
 *
 * A sealed value is `enc1:<key id>:<base64 of iv (12) | ciphertext | tag (16)>`; the key id is
 * the first 8 hex digits of sha256 of the key (it names the key, it reveals nothing of it).
 * `context` is authenticated data (the record's id): a sealed value copied to another record
 * does not open there.
 */
export const SEALED_PREFIX = 'enc1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretError extends Error {}

export interface SecretKey {
  id: string;
  key: Buffer;
  /** The same key imported once: node:crypto imports a Buffer key again at every cipher. */
  object: KeyObject;
}

/**
 * Fresh random IVs, drawn from the CSPRNG in blocks, as `crypto.randomUUID` draws its bytes:
 * one `randomBytes` call per 512 IVs instead of one per value (a call cost as much as the
 * cipher itself). Each IV is used once; random 96-bit IVs are what GCM under one key wants.
 */
let ivPool = Buffer.alloc(0);
let ivAt = 0;
function freshIv(): Buffer {
  if (ivAt + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_BYTES * 512);
    ivAt = 0;
  }
  const iv = ivPool.subarray(ivAt, ivAt + IV_BYTES);
  ivAt += IV_BYTES;
  return iv;
}

export const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

/** One key as SECRET_ENCRYPTION_KEYS lists it: base64 (or base64url) of exactly 32 bytes. */
export function parseKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64') : Buffer.alloc(0);
  if (key.length !== 32) throw new SecretError('each key must be base64 of exactly 32 random bytes (e.g. `openssl rand -base64 32`)');
  return key;
}

export class SecretBox {
  readonly keys: SecretKey[];

  constructor(keys: Buffer[]) {
    if (!keys.length) throw new SecretError('at least one encryption key is needed');
    this.keys = keys.map((key) => ({ id: keyId(key), key, object: createSecretKey(key) }));
  }

  /** The key new values are sealed with. */
  get current(): SecretKey {
    return this.keys[0];
  }

  isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX);
  }

  /** Whether a sealed value is sealed with the newest key (else re-encryption has work to do). */
  isCurrent(value: string): boolean {
    return value.startsWith(`${SEALED_PREFIX}${this.current.id}:`);
  }

  seal(plain: string, context: string): string {
    const iv = freshIv();
    const cipher = createCipheriv('aes-256-gcm', this.current.object, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${SEALED_PREFIX}${this.current.id}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64')}`;
  }

  /** Errors name the key id at most, never a value. */
  open(sealed: string, context: string): string {
    if (!this.isSealed(sealed)) throw new SecretError('the stored secret is not encrypted');
    const [, id, data] = sealed.split(':');
    const entry = this.keys.find((k) => k.id === id);
    if (!entry) throw new SecretError(`the stored secret is encrypted with key ${id}, which is not among SECRET_ENCRYPTION_KEYS`);
    const raw = Buffer.from(data ?? '', 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretError('the stored secret is malformed');
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.object, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretError(`the stored secret does not authenticate under key ${id}`);
    }
  }
}

/**
 * The local key file used when SECRET_ENCRYPTION_KEYS is unset: read when present, else made
 * (32 random bytes, mode 0600) atomically, so processes starting together agree on one key.
 */
export function localKey(file: string): { key: Buffer; created: boolean } {
  const read = () => parseKey(fs.readFileSync(file, 'utf8'));
  if (fs.existsSync(file)) return { key: read(), created: false };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  try {
    fs.linkSync(tmp, file); // fails with EEXIST when another process made it first: then theirs is used
    return { key: read(), created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { key: read(), created: false };
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** The runtime's secret box (src/state.ts), set once at start-up by startRuntime. */
export const SECRET_BOX = slot<SecretBox>('secretBox');

/**
 * The box for this process: SECRET_ENCRYPTION_KEYS when set, else the local key file (made on
 * first start and announced in the log, so `npm start` needs nothing).
 */
export function openSecretBox(config: { secretEncryptionKeys: Buffer[]; secretKeyFile: string }, log: (msg: string, fields: object) => void): SecretBox {
  if (config.secretEncryptionKeys.length) {
    const box = new SecretBox(config.secretEncryptionKeys);
    log('secrets at rest: encrypting with the first of SECRET_ENCRYPTION_KEYS', { keyId: box.current.id, keys: box.keys.length });
    return box;
  }
  const { key, created } = localKey(config.secretKeyFile);
  const box = new SecretBox([key]);
  log(
    created
      ? 'secrets at rest: SECRET_ENCRYPTION_KEYS is unset; generated a local key file (keep it with the database, back it up, or set SECRET_ENCRYPTION_KEYS)'
      : 'secrets at rest: SECRET_ENCRYPTION_KEYS is unset; using the local key file',
    { file: config.secretKeyFile, keyId: box.current.id },
  );
  return box;
}
