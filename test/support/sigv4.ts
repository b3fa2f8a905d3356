import { HttpRequest } from "@smithy/core/protocols";
import { SignatureV4 } from "@smithy/signature-v4";
import { Sha256 } from "@toolbus/core";
import type { EventBridgeServer } from "../../packages/local/src/bus";

export const JSON_11 = "application/x-amz-json-1.1";

/** A raw request signed the way curl (`--aws-sigv4`) and the AWS CLI sign it. */
export async function signedPost(
  server: Pick<EventBridgeServer, "endpoint" | "credentials">,
  target: string,
  body: string,
  credentials = server.credentials,
): Promise<Response> {
  const url = new URL(server.endpoint);
  const signer = new SignatureV4({
    credentials,
    region: "us-east-1",
    service: "events",
    sha256: Sha256,
    // As curl and the AWS CLI sign: no x-amz-content-sha256 header (the JS SDK sends one).
    applyChecksum: false,
  });
  const signed = await signer.sign(
    new HttpRequest({
      method: "POST",
      protocol: "http:",
      hostname: url.hostname,
      port: Number(url.port),
      path: "/",
      headers: { host: url.host, "x-amz-target": target, "content-type": JSON_11 },
      body,
    }),
  );
  const { host: _host, ...headers } = signed.headers;
  return fetch(server.endpoint, { method: "POST", headers, body });
}
