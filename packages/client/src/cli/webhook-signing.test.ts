import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { webhookIdOf as serverWebhookIdOf } from "../../../core/src/subscriptions/targets";
import {
  isWebhookSecret as serverIsWebhookSecret,
  verifyWebhook,
} from "../../../core/src/subscriptions/webhook-signature";
import { isWebhookSecret, newWebhookSecret, webhookHeaders, webhookIdOf } from "./webhook-signing";

// The CLI's copy of Toolbus's webhook signing (the published client cannot carry core) must
// agree with the server's: the same ids, the same secrets, signatures both verifiers accept.

describe("toolbus listen's webhook signing", () => {
  it("gives an event the webhook-id the server's webhooks give it", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 300 }), (eventKey) => {
        expect(webhookIdOf(eventKey)).toBe(serverWebhookIdOf(eventKey));
      }),
    );
    expect(webhookIdOf("run-1/call.1/scheduled")).toMatch(/^evt_[0-9a-f]{32}$/);
  });

  it("signs so that the server's verifier and the reference library accept it", () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ type: "ToolCallScheduled", timestamp: "t", data: { a: 1 } });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders({
      secret,
      id: webhookIdOf("run-1/c/scheduled"),
      timestamp,
      body,
    });
    expect(verifyWebhook({ secret, headers, body })).toMatchObject({ ok: true });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });

  it("accepts exactly the secrets the server accepts", () => {
    const samples = [
      newWebhookSecret(),
      `whsec_${Buffer.alloc(24, 1).toString("base64")}`,
      `whsec_${Buffer.alloc(64, 1).toString("base64")}`,
      `whsec_${Buffer.alloc(23, 1).toString("base64")}`,
      `whsec_${Buffer.alloc(65, 1).toString("base64")}`,
      `whsec_${Buffer.alloc(32, 1).toString("base64url")}`,
      // A non-canonical spelling: the last character's unused bits set.
      `whsec_${Buffer.alloc(32, 1).toString("base64").replace(/E=$/, "F=")}`,
      Buffer.alloc(32, 1).toString("base64"),
      "whsec_",
    ];
    for (const secret of samples) {
      expect(isWebhookSecret(secret), secret).toBe(serverIsWebhookSecret(secret));
    }
    expect(isWebhookSecret(newWebhookSecret())).toBe(true);
  });
});
