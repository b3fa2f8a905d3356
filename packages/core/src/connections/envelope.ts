import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { mkdir, open, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { SDK_CLIENT_OPTIONS } from "../sdk-options";

/**
 * Envelope encryption of connection tokens. Each sealed value has its own data key (AES-256-GCM);
 * the data key is kept only wrapped by the stage's key: a KMS key on AWS, a key file locally.
 * The item's keys are the additional authenticated data of both layers (KMS's encryption
 * context), so a blob copied onto another person's row does not open there.
 */
export interface DataKeys {
  /** A fresh data key, and the same wrapped for storage, bound to `context`. */
  generate(context: Record<string, string>): Promise<{ plaintext: Buffer; wrapped: Buffer }>;
  /** The data key `wrapped` holds; rejects when it was not wrapped for `context`. */
  unwrap(wrapped: Buffer, context: Record<string, string>): Promise<Buffer>;
}

/** The stage's key cannot be used: missing, unreadable, or refused. Never a 500: the connection reads as expired. */
export class KeyUnavailableError extends Error {
  override name = "KeyUnavailableError";
}

const VERSION = 1;

/** Seals `plaintext` for the item `context` names. */
export async function seal(
  keys: DataKeys,
  plaintext: string,
  context: Record<string, string>,
): Promise<Buffer> {
  const { plaintext: dataKey, wrapped } = await keys.generate(context);
  try {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", dataKey, iv);
    cipher.setAAD(aad(context));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const header = Buffer.alloc(3);
    header.writeUInt8(VERSION, 0);
    header.writeUInt16BE(wrapped.length, 1);
    return Buffer.concat([header, wrapped, iv, cipher.getAuthTag(), body]);
  } finally {
    dataKey.fill(0);
  }
}

/** Opens what `seal` sealed for the same `context`; rejects on any other context or a changed byte. */
export async function unseal(
  keys: DataKeys,
  sealed: Uint8Array,
  context: Record<string, string>,
): Promise<string> {
  const blob = Buffer.from(sealed);
  if (blob.length < 3 || blob.readUInt8(0) !== VERSION) throw new Error("Not a sealed value.");
  const wrappedLength = blob.readUInt16BE(1);
  const wrapped = blob.subarray(3, 3 + wrappedLength);
  const iv = blob.subarray(3 + wrappedLength, 15 + wrappedLength);
  const tag = blob.subarray(15 + wrappedLength, 31 + wrappedLength);
  const body = blob.subarray(31 + wrappedLength);
  const dataKey = await keys.unwrap(wrapped, context);
  try {
    const decipher = createDecipheriv("aes-256-gcm", dataKey, iv);
    decipher.setAAD(aad(context));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } finally {
    dataKey.fill(0);
  }
}

/** The context as bytes, in key order, so both layers bind the same thing. */
function aad(context: Record<string, string>): Buffer {
  const sorted = Object.keys(context)
    .sort()
    .map((key) => [key, context[key]]);
  return Buffer.from(JSON.stringify(sorted), "utf8");
}

/**
 * The local stage's key: 32 random bytes in a file under `.toolbus/`, created with mode 0600 on
 * the first connection. Once connections exist, a missing or unreadable file is not replaced
 * silently when reading: the connections sealed with it read as expired, with why.
 */
export function localKeyFile(path: string): DataKeys {
  let key: Promise<Buffer> | undefined;
  const read = async (create: boolean): Promise<Buffer> => {
    try {
      return checked(await readFile(path), path);
    } catch (error) {
      if (!create || (error as NodeJS.ErrnoException).code !== "ENOENT")
        throw unavailable(error, path);
    }
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const fresh = randomBytes(32);
    try {
      const file = await open(path, "wx", 0o600);
      await file.writeFile(fresh);
      await file.close();
      return fresh;
    } catch (error) {
      // Another process made it first: use theirs.
      if ((error as NodeJS.ErrnoException).code === "EEXIST")
        return checked(await readFile(path), path);
      throw unavailable(error, path);
    }
  };
  const keyFor = (create: boolean) => {
    key ??= read(create);
    // A failed read is not kept: the file may be restored.
    key.catch(() => {
      key = undefined;
    });
    return key;
  };
  return {
    async generate(context) {
      const dataKey = randomBytes(32);
      return { plaintext: dataKey, wrapped: wrapWith(await keyFor(true), dataKey, context) };
    },
    async unwrap(wrapped, context) {
      return unwrapWith(await keyFor(false), wrapped, context);
    },
  };
}

function checked(key: Buffer, path: string): Buffer {
  if (key.length !== 32) {
    throw new KeyUnavailableError(
      `The stage's connection key file (${path}) is not a 32-byte key.`,
    );
  }
  return key;
}

function unavailable(error: unknown, path: string): KeyUnavailableError {
  const code = (error as NodeJS.ErrnoException).code;
  if (error instanceof KeyUnavailableError) return error;
  return new KeyUnavailableError(
    code === "ENOENT"
      ? `The stage's connection key file (${path}) is missing: tokens sealed with it cannot be read.`
      : `The stage's connection key file (${path}) cannot be read (${code ?? "unknown error"}).`,
  );
}

function wrapWith(key: Buffer, dataKey: Buffer, context: Record<string, string>): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad(context));
  const body = Buffer.concat([cipher.update(dataKey), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function unwrapWith(key: Buffer, wrapped: Buffer, context: Record<string, string>): Buffer {
  const decipher = createDecipheriv("aes-256-gcm", key, wrapped.subarray(0, 12));
  decipher.setAAD(aad(context));
  decipher.setAuthTag(wrapped.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(wrapped.subarray(28)), decipher.final()]);
  } catch {
    throw new KeyUnavailableError(
      "The token was sealed with another key than the stage's connection key now.",
    );
  }
}

/**
 * The AWS stage's key: KMS data keys under the key `keyId`, with the item's keys as the
 * encryption context (KMS refuses to unwrap for any other). Named imports, so a bundle holds
 * the two commands and the client, not the whole KMS API.
 */
export function kmsKeys(keyId: string): DataKeys {
  let client: KMSClient | undefined;
  const kms = () => {
    client ??= new KMSClient(SDK_CLIENT_OPTIONS);
    return client;
  };
  return {
    async generate(context) {
      const answer = await kms()
        .send(
          new GenerateDataKeyCommand({
            KeyId: keyId,
            KeySpec: "AES_256",
            EncryptionContext: context,
          }),
        )
        .catch(refused("a data key"));
      if (!answer.Plaintext || !answer.CiphertextBlob) {
        throw new KeyUnavailableError("KMS answered without a data key.");
      }
      return {
        plaintext: Buffer.from(answer.Plaintext),
        wrapped: Buffer.from(answer.CiphertextBlob),
      };
    },
    async unwrap(wrapped, context) {
      const answer = await kms()
        .send(
          new DecryptCommand({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: context }),
        )
        .catch(refused("the token's key"));
      if (!answer.Plaintext) throw new KeyUnavailableError("KMS answered without the key.");
      return Buffer.from(answer.Plaintext);
    },
  };
}

/** KMS answers that will not change on a retry; anything else (throttling) is thrown as it came. */
const KEY_REFUSALS = new Set([
  "AccessDeniedException",
  "DisabledException",
  "IncorrectKeyException",
  "InvalidCiphertextException",
  "KMSInvalidStateException",
  "NotFoundException",
]);

function refused(what: string) {
  return (error: unknown): never => {
    const name = (error as Error).name;
    if (KEY_REFUSALS.has(name)) throw new KeyUnavailableError(`KMS refused ${what} (${name}).`);
    throw error;
  };
}
