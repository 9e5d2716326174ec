import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Secrets at rest: AES-256-GCM under a key derived from configuration; never returned by any read. */
export interface SecretBox {
  seal(plaintext: string): string;
  open(ciphertext: string): string;
}

export function createSecretBox(key: string, random: (n: number) => Buffer = randomBytes): SecretBox {
  const k = createHash('sha256').update(key).digest();
  return {
    seal(plaintext) {
      const iv = random(12);
      const cipher = createCipheriv('aes-256-gcm', k, iv);
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
    },
    open(ciphertext) {
      const raw = Buffer.from(ciphertext, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', k, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
