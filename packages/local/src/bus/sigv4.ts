import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { HttpRequest } from "@smithy/core/protocols";
import { SignatureV4 } from "@smithy/signature-v4";
import { Sha256 } from "@toolbus/core";
import { EventBridgeApiError } from "./errors";

export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Fresh credentials for one local bus: what it hands out is the only thing it accepts. */
export function generateLocalCredentials(): LocalCredentials {
  return {
    accessKeyId: `LOCAL${randomBytes(8).toString("hex").toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString("base64url"),
  };
}

/** AWS refuses a signature dated more than 15 minutes from its own clock. */
const MAX_SKEW_MS = 15 * 60 * 1000;
const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]{1,128})\/(\d{8})\/([a-z0-9-]{1,32})\/([a-z0-9-]{1,32})\/aws4_request, ?SignedHeaders=([a-z0-9;_.-]{1,2048}), ?Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

const refused = (type: string, message: string) => new EventBridgeApiError(type, message, 403);

export interface SignedRequest {
  method: string;
  /** Path and query, as the request line had them. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Verifies a request's SigV4 signature the way EventBridge does, by signing the request again
 * with the secret of the access key it names (the SDK's own signer, so both sides build the
 * canonical request identically) and comparing in constant time. Only the headers the
 * signature names are signed again, so proxies' additions do not matter.
 */
export async function verifySignature(
  request: SignedRequest,
  credentials: LocalCredentials,
): Promise<void> {
  const authorization = single(request.headers.authorization);
  if (!authorization) {
    throw refused(
      "MissingAuthenticationTokenException",
      "Missing Authentication Token: sign requests with the credentials in local.json.",
    );
  }
  const parsed = AUTHORIZATION.exec(authorization);
  if (!parsed)
    throw refused(
      "IncompleteSignatureException",
      "The Authorization header is not a SigV4 signature.",
    );
  const [
    ,
    accessKeyId,
    day = "",
    region = "",
    service = "",
    signedHeaderList = "",
    signature = "",
  ] = parsed;
  if (accessKeyId !== credentials.accessKeyId) {
    throw refused(
      "UnrecognizedClientException",
      "The security token included in the request is invalid.",
    );
  }
  const amzDate = single(request.headers["x-amz-date"]) ?? "";
  const date = AMZ_DATE.exec(amzDate);
  if (!date || amzDate.slice(0, 8) !== day) {
    throw refused(
      "IncompleteSignatureException",
      "X-Amz-Date is missing or does not match the credential scope.",
    );
  }
  const [year, month, dayOfMonth, hours, minutes, seconds] = date.slice(1).map(Number);
  const signingDate = new Date(
    Date.UTC(year ?? 0, (month ?? 1) - 1, dayOfMonth, hours, minutes, seconds),
  );
  if (Math.abs(Date.now() - signingDate.getTime()) > MAX_SKEW_MS) {
    throw refused(
      "InvalidSignatureException",
      "Signature expired: X-Amz-Date is more than 15 minutes from now.",
    );
  }
  const signedHeaders = signedHeaderList.split(";");
  if (!signedHeaders.includes("host")) {
    throw refused("InvalidSignatureException", "The signature must cover the Host header.");
  }
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = request.headers[name];
    if (value === undefined) {
      throw refused("InvalidSignatureException", `Signed header ${name} is missing.`);
    }
    headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  const url = new URL(request.url, "http://local");
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const seen = query[key];
    query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  const signer = signerFor(credentials, region, service);
  const again = await signer.sign(
    new HttpRequest({
      method: request.method,
      protocol: "http:",
      hostname: "local",
      path: url.pathname,
      query,
      headers,
      body: request.body,
    }),
    { signingDate, signableHeaders: new Set(signedHeaders) },
  );
  const expected = /Signature=([0-9a-f]{64})$/.exec(String(again.headers.authorization))?.[1];
  const matches =
    expected !== undefined &&
    timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(signature, "hex"));
  if (!matches) {
    throw refused(
      "InvalidSignatureException",
      "The request signature we calculated does not match the signature you provided.",
    );
  }
}

/**
 * One signer per credentials, region and service: a signer keeps the keys it derives (four
 * HMACs per day and scope), so only the request's own hashing is left per request.
 */
const signers = new WeakMap<LocalCredentials, Map<string, SignatureV4>>();

function signerFor(credentials: LocalCredentials, region: string, service: string): SignatureV4 {
  let byScope = signers.get(credentials);
  if (!byScope) {
    byScope = new Map();
    signers.set(credentials, byScope);
  }
  const scope = `${region}/${service}`;
  let signer = byScope.get(scope);
  if (!signer) {
    signer = new SignatureV4({
      credentials,
      region,
      service,
      sha256: Sha256,
      // Never add a header the client did not sign (x-amz-content-sha256): only the AWS SDKs send it.
      applyChecksum: false,
    });
    // A client may name any region and service in its scope: keep the cache small.
    if (byScope.size >= 16) byScope.clear();
    byScope.set(scope, signer);
  }
  return signer;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
