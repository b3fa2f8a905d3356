import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors";
import {
  isWebhookSecret,
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  webhookHeaders,
  webhookSecretKey,
} from "./signature";

// The test vector every Standard Webhooks reference library (Go, Python, PHP, Java, C#, JS)
// checks its `sign` against.
const vector = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

const secretOf = (bytes: number, fill = 7) =>
  `whsec_${Buffer.alloc(bytes, fill).toString("base64")}`;

describe("signWebhook", () => {
  it("matches the Standard Webhooks test vector", () => {
    const { signature, ...input } = vector;
    expect(signWebhook(input)).toBe(signature);
  });

  it("signs once per secret during a rotation, in the order given", () => {
    const next = newWebhookSecret();
    const previous = newWebhookSecret();
    const message = { id: "msg_1", timestamp: 1_700_000_000, body: "{}" };

    const header = signWebhook({ secrets: [next, previous], ...message });

    expect(header.split(" ")).toEqual([
      signWebhook({ secret: next, ...message }),
      signWebhook({ secret: previous, ...message }),
    ]);
  });

  it("sends one signature when the same secret is listed twice", () => {
    const secret = newWebhookSecret();
    const message = { id: "msg_1", timestamp: 1_700_000_000, body: "{}" };
    expect(signWebhook({ secrets: [secret, secret], ...message })).toBe(
      signWebhook({ secret, ...message }),
    );
  });

  it("refuses to sign without a secret", () => {
    expect(() => signWebhook({ secrets: [], id: "msg_1", timestamp: 1, body: "" })).toThrow(
      ValidationError,
    );
  });

  it.each([
    ["empty", ""],
    ["a dot, which would blur where the id ends in the signed text", "msg.1"],
    ["a space", "msg 1"],
    ["a line break", "msg\r\n1"],
    ["more than 256 characters", "m".repeat(257)],
  ])("refuses an id that is %s", (_label, id) => {
    expect(() => signWebhook({ secret: vector.secret, id, timestamp: 1, body: "" })).toThrow(
      ValidationError,
    );
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])(
    "refuses the timestamp %s",
    (timestamp) => {
      expect(() =>
        signWebhook({ secret: vector.secret, id: "msg_1", timestamp, body: "" }),
      ).toThrow(ValidationError);
    },
  );
});

describe("webhookHeaders", () => {
  it("gives the id, the timestamp in seconds and the signature", () => {
    const { signature, ...input } = vector;
    expect(webhookHeaders(input)).toEqual({
      "webhook-id": vector.id,
      "webhook-timestamp": "1614265330",
      "webhook-signature": signature,
    });
  });
});

describe("webhook secrets", () => {
  it("are whsec_ and the base64 of 32 random bytes, different every time", () => {
    const secrets = Array.from({ length: 20 }, newWebhookSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(webhookSecretKey(secret)).toHaveLength(32);
    }
    expect(new Set(secrets).size).toBe(secrets.length);
  });

  it("may hold 24 to 64 bytes", () => {
    expect(webhookSecretKey(secretOf(24))).toHaveLength(24);
    expect(webhookSecretKey(secretOf(64))).toHaveLength(64);
    expect(isWebhookSecret(secretOf(23))).toBe(false);
    expect(isWebhookSecret(secretOf(65))).toBe(false);
  });

  it.each([
    ["nothing", ""],
    ["the prefix alone", "whsec_"],
    ["no prefix", Buffer.alloc(32, 7).toString("base64")],
    ["another prefix", `whsk_${Buffer.alloc(32, 7).toString("base64")}`],
    ["base64url characters", `whsec_${Buffer.alloc(32, 0xfb).toString("base64url")}`],
    ["missing padding", secretOf(32).replace(/=+$/, "")],
    ["a space inside", secretOf(32).replace("whsec_", "whsec_ ")],
    ["a non-canonical last character", `${secretOf(32).slice(0, -2)}B=`],
    ["a non-string", 42],
  ])("are refused when they have %s", (_label, secret) => {
    expect(isWebhookSecret(secret)).toBe(false);
  });

  it("are refused without being repeated in the error", () => {
    const secret = `whsec_${"A".repeat(20)}!`;
    let refusal: unknown;
    try {
      webhookSecretKey(secret);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ValidationError);
    expect((refusal as Error).message).not.toContain("AAAA");
  });
});

describe("verifyWebhook", () => {
  const secret = newWebhookSecret();
  const now = 1_700_000_000;
  const body = '{"type":"ToolCallScheduled","data":{"callId":"c_1"}}';
  const signed = (timestamp = now, content = body, id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W") => ({
    ...webhookHeaders({ secret, id, timestamp, body: content }),
  });

  it("accepts what signWebhook signed and says which message it was", () => {
    expect(verifyWebhook({ secret, headers: signed(), body, now })).toEqual({
      ok: true,
      id: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
      timestamp: now,
    });
  });

  it("reads headers in any case, from a record or a Fetch Headers", () => {
    const upper = Object.fromEntries(
      Object.entries(signed()).map(([name, value]) => [name.toUpperCase(), value]),
    );
    expect(verifyWebhook({ secret, headers: upper, body, now }).ok).toBe(true);
    expect(verifyWebhook({ secret, headers: new Headers(signed()), body, now }).ok).toBe(true);
  });

  it("accepts the old or the new secret while a rotation is under way", () => {
    const previous = newWebhookSecret();
    const headers = webhookHeaders({
      secrets: [secret, previous],
      id: "msg_1",
      timestamp: now,
      body,
    });
    expect(verifyWebhook({ secret: previous, headers: { ...headers }, body, now }).ok).toBe(true);
    expect(verifyWebhook({ secret, headers: { ...headers }, body, now }).ok).toBe(true);
    // A receiver holding both secrets accepts a header signed with either.
    const single = webhookHeaders({ secret: previous, id: "msg_1", timestamp: now, body });
    expect(
      verifyWebhook({ secrets: [secret, previous], headers: { ...single }, body, now }).ok,
    ).toBe(true);
  });

  it("refuses a signature made with another secret", () => {
    expect(verifyWebhook({ secret: newWebhookSecret(), headers: signed(), body, now })).toEqual({
      ok: false,
      reason: "no_matching_signature",
    });
  });

  it("refuses a tampered body, id or timestamp", () => {
    const headers = signed();
    const tampered = [
      { headers, body: body.replace("c_1", "c_2") },
      { headers: { ...headers, "webhook-id": "msg_other" }, body },
      { headers: { ...headers, "webhook-timestamp": String(now - 1) }, body },
    ];
    for (const attempt of tampered) {
      expect(verifyWebhook({ secret, now, ...attempt })).toEqual({
        ok: false,
        reason: "no_matching_signature",
      });
    }
  });

  it("accepts timestamps up to five minutes away and refuses older or newer ones", () => {
    const at = (offset: number) =>
      verifyWebhook({ secret, headers: signed(now + offset), body, now });
    expect(at(-WEBHOOK_TOLERANCE_SECONDS).ok).toBe(true);
    expect(at(WEBHOOK_TOLERANCE_SECONDS).ok).toBe(true);
    expect(at(-WEBHOOK_TOLERANCE_SECONDS - 1)).toEqual({ ok: false, reason: "timestamp_too_old" });
    expect(at(WEBHOOK_TOLERANCE_SECONDS + 1)).toEqual({ ok: false, reason: "timestamp_too_new" });
  });

  it("checks the timestamp against the clock when no time is given", () => {
    const fresh = signed(Math.floor(Date.now() / 1000));
    const stale = signed(Math.floor(Date.now() / 1000) - 3600);
    expect(verifyWebhook({ secret, headers: fresh, body }).ok).toBe(true);
    expect(verifyWebhook({ secret, headers: stale, body })).toEqual({
      ok: false,
      reason: "timestamp_too_old",
    });
  });

  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])(
    "refuses a message without %s",
    (name) => {
      const headers: Record<string, string> = { ...signed() };
      delete headers[name];
      expect(verifyWebhook({ secret, headers, body, now })).toEqual({
        ok: false,
        reason: "missing_headers",
      });
      expect(verifyWebhook({ secret, headers: { ...headers, [name]: "" }, body, now })).toEqual({
        ok: false,
        reason: "missing_headers",
      });
    },
  );

  it.each(["hello", "1.7e9", "-1700000000", " 1700000000", "0x6553f100", "1700000000123456"])(
    "refuses the timestamp header %j",
    (timestamp) => {
      const headers = { ...signed(), "webhook-timestamp": timestamp };
      expect(verifyWebhook({ secret, headers, body, now })).toEqual({
        ok: false,
        reason: "malformed_headers",
      });
    },
  );

  it("refuses a header sent twice, whichever copy is genuine", () => {
    const headers = signed();
    const twice = { ...headers, "webhook-id": [headers["webhook-id"], "msg_other"] };
    expect(verifyWebhook({ secret, headers: twice, body, now })).toEqual({
      ok: false,
      reason: "malformed_headers",
    });
  });

  it.each([
    ["a made-up signature", () => "v1,dawfeoifkpqwoekfpqoekf"],
    ["a cut-off signature", (valid: string) => valid.slice(0, 8)],
    ["junk after the signature", (valid: string) => `${valid}!!`],
    ["another version's label", (valid: string) => valid.replace("v1,", "v2,")],
    ["no version label", (valid: string) => valid.replace("v1,", "")],
  ])("refuses %s", (_label, forge) => {
    const headers = signed();
    const forged = { ...headers, "webhook-signature": forge(headers["webhook-signature"]) };
    expect(verifyWebhook({ secret, headers: forged, body, now })).toEqual({
      ok: false,
      reason: "no_matching_signature",
    });
  });

  it("skips signatures of other schemes and finds the v1 one among them", () => {
    const headers = signed();
    const mixed = {
      ...headers,
      "webhook-signature": `v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw== v1,bogus ${headers["webhook-signature"]}`,
    };
    expect(verifyWebhook({ secret, headers: mixed, body, now }).ok).toBe(true);
  });

  it("verifies any body it signed and no body altered by one character", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.nat(), (content, position) => {
        const headers = signed(now, content);
        expect(verifyWebhook({ secret, headers, body: content, now }).ok).toBe(true);
        const chars = Array.from(content);
        const index = chars.length === 0 ? 0 : position % chars.length;
        chars.splice(index, 1, chars[index] === "x" ? "y" : "x");
        expect(verifyWebhook({ secret, headers, body: chars.join(""), now }).ok).toBe(false);
      }),
    );
  });
});
