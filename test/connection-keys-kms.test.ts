import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { KeyUnavailableError, kmsKeys, seal, unseal } from "@toolbus/core/connections/envelope";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// ---- A stand-in for KMS's JSON API on loopback -----------------------------------------------
// No KMS runs here. This one does what the two operations the stage uses promise: a data key
// wrapped under its own master key with the encryption context bound in (AES-GCM's additional
// data), and Decrypt refusing any other context as InvalidCiphertextException. `refuse` makes
// it answer an error instead, as KMS does for a disabled key or a denied role.

const KEY_ID = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-0000-4000-8000-000000000000";
const master = randomBytes(32);
const received: { target: string; body: Record<string, unknown> }[] = [];
let refuse: { status: number; type: string } | undefined;

const contextBytes = (context: unknown) =>
  Buffer.from(JSON.stringify(Object.entries((context ?? {}) as Record<string, string>).sort()));

function wrap(dataKey: Buffer, context: unknown): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", master, iv);
  cipher.setAAD(contextBytes(context));
  const body = Buffer.concat([cipher.update(dataKey), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function unwrap(blob: Buffer, context: unknown): Buffer | undefined {
  try {
    const decipher = createDecipheriv("aes-256-gcm", master, blob.subarray(0, 12));
    decipher.setAuthTag(blob.subarray(12, 28));
    decipher.setAAD(contextBytes(context));
    return Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]);
  } catch {
    return undefined;
  }
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return JSON.parse(text) as Record<string, unknown>;
}

const kms = createServer(async (req, res) => {
  const target = String(req.headers["x-amz-target"] ?? "");
  const body = await bodyOf(req);
  received.push({ target, body });
  const answer = (status: number, json: unknown) => {
    res.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
    res.end(JSON.stringify(json));
  };
  if (refuse) return answer(refuse.status, { __type: refuse.type, message: "refused" });
  if (target === "TrentService.GenerateDataKey") {
    const dataKey = randomBytes(32);
    return answer(200, {
      KeyId: KEY_ID,
      Plaintext: dataKey.toString("base64"),
      CiphertextBlob: wrap(dataKey, body.EncryptionContext).toString("base64"),
    });
  }
  if (target === "TrentService.Decrypt") {
    const dataKey = unwrap(
      Buffer.from(String(body.CiphertextBlob), "base64"),
      body.EncryptionContext,
    );
    if (!dataKey) return answer(400, { __type: "InvalidCiphertextException", message: "no" });
    return answer(200, { KeyId: KEY_ID, Plaintext: dataKey.toString("base64") });
  }
  answer(400, { __type: "UnknownOperationException", message: target });
});

const saved: Record<string, string | undefined> = {};
const ENV = {
  AWS_ENDPOINT_URL_KMS: "",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
  AWS_SECRET_ACCESS_KEY: "secret",
};

beforeAll(async () => {
  await new Promise<void>((resolve) => kms.listen(0, "127.0.0.1", resolve));
  ENV.AWS_ENDPOINT_URL_KMS = `http://127.0.0.1:${(kms.address() as AddressInfo).port}`;
  for (const [name, value] of Object.entries(ENV)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  delete process.env.AWS_SESSION_TOKEN;
});

afterEach(() => {
  received.length = 0;
  refuse = undefined;
});

afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  kms.closeAllConnections();
  await new Promise((resolve) => kms.close(resolve));
});

const alice = { pk: "CONN#key:alice", sk: "PROVIDER#github" };
const bob = { pk: "CONN#key:bob", sk: "PROVIDER#github" };

describe("connection tokens sealed under a KMS key", () => {
  it("asks KMS for a data key bound to the item, and opens the token with the same binding", async () => {
    const keys = kmsKeys(KEY_ID);
    const sealed = await seal(keys, "gho_token", alice);
    expect(sealed.includes(Buffer.from("gho_token"))).toBe(false);
    await expect(unseal(keys, sealed, alice)).resolves.toBe("gho_token");
    expect(received.map((r) => r.target)).toEqual([
      "TrentService.GenerateDataKey",
      "TrentService.Decrypt",
    ]);
    for (const { body } of received) {
      expect(body.KeyId).toBe(KEY_ID);
      expect(body.EncryptionContext).toEqual(alice);
    }
    expect(received[0]?.body.KeySpec).toBe("AES_256");
  });

  it("does not open a token copied onto another person's item", async () => {
    const keys = kmsKeys(KEY_ID);
    const sealed = await seal(keys, "gho_token", alice);
    const error = await unseal(keys, sealed, bob).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyUnavailableError);
  });

  it("reads a disabled or denied key as unavailable, saying which refusal", async () => {
    const keys = kmsKeys(KEY_ID);
    const sealed = await seal(keys, "gho_token", alice);
    for (const type of ["DisabledException", "AccessDeniedException", "KMSInvalidStateException"]) {
      refuse = { status: 400, type };
      const error = await unseal(keys, sealed, alice).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KeyUnavailableError);
      expect((error as Error).message).toContain(type);
      const sealing = await seal(keys, "gho_other", alice).catch((e: unknown) => e);
      expect(sealing).toBeInstanceOf(KeyUnavailableError);
    }
  });

  it("passes throttling on as it came: a retry may succeed", async () => {
    const keys = kmsKeys(KEY_ID);
    const sealed = await seal(keys, "gho_token", alice);
    refuse = { status: 400, type: "ThrottlingException" };
    const error = await unseal(keys, sealed, alice).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(KeyUnavailableError);
    expect((error as Error).name).toBe("ThrottlingException");
  });
});
