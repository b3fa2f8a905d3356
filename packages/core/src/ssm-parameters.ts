import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { HttpRequest } from "@smithy/core/protocols";
import { SignatureV4 } from "@smithy/signature-v4";
import { Sha256 } from "./util/sha256";

/** One GetParameters call: at most 10 names, values decrypted. */
export type ParameterFetcher = (names: string[]) => Promise<{
  Parameters?: Array<{ Name?: string; Value?: string }>;
  InvalidParameters?: string[];
}>;

/** How long one GetParameters may take, and how often a throttled or failed one is tried. */
const TIMEOUT_MS = 2_000;
const MAX_ATTEMPTS = 3;

/**
 * SSM's GetParameters (values decrypted), signed with the AWS SDK's own SigV4 signer and sent
 * over node:https: one request per cold start, for the functions that bind secrets. SSM's SDK
 * client would add ~83 KB to each of them for this one call. Credentials are the function's
 * role's, which Lambda always gives as environment variables; the endpoint follows
 * `AWS_ENDPOINT_URL_SSM` like the SDK's. Throttling and server errors are tried again.
 */
export function ssmParameterFetcher(env: NodeJS.ProcessEnv = process.env): ParameterFetcher {
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1";
  const endpoint = new URL(
    env.AWS_ENDPOINT_URL_SSM ?? env.AWS_ENDPOINT_URL ?? `https://ssm.${region}.amazonaws.com`,
  );
  const signer = new SignatureV4({
    service: "ssm",
    region,
    sha256: Sha256,
    credentials: async () => {
      const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN } = env;
      if (!AWS_ACCESS_KEY_ID || !AWS_SECRET_ACCESS_KEY) {
        throw new Error("No AWS credentials in the environment to read SSM with.");
      }
      return {
        accessKeyId: AWS_ACCESS_KEY_ID,
        secretAccessKey: AWS_SECRET_ACCESS_KEY,
        ...(AWS_SESSION_TOKEN ? { sessionToken: AWS_SESSION_TOKEN } : {}),
      };
    },
  });
  return async (names) => {
    const body = JSON.stringify({ Names: names, WithDecryption: true });
    for (let attempt = 1; ; attempt++) {
      const signed = await signer.sign(
        new HttpRequest({
          method: "POST",
          protocol: endpoint.protocol,
          hostname: endpoint.hostname,
          ...(endpoint.port ? { port: Number(endpoint.port) } : {}),
          path: endpoint.pathname,
          headers: {
            host: endpoint.host,
            "content-type": "application/x-amz-json-1.1",
            "x-amz-target": "AmazonSSM.GetParameters",
          },
          body,
        }),
      );
      const answer = await post(endpoint, signed.headers, body).catch((error: Error) => ({
        status: 0,
        text: error.message,
      }));
      if (answer.status === 200) return JSON.parse(answer.text);
      const { __type: type = "", message = answer.text } = parseError(answer.text);
      const retryable = answer.status === 0 || answer.status >= 500 || /Throttl/.test(type);
      if (!retryable || attempt >= MAX_ATTEMPTS) {
        throw new Error(`SSM GetParameters answered ${answer.status} ${type}: ${message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt * Math.random()));
    }
  };
}

function parseError(text: string): { __type?: string; message?: string } {
  try {
    const parsed = JSON.parse(text) as { __type?: string; message?: string; Message?: string };
    return { __type: parsed.__type?.split("#").pop(), message: parsed.message ?? parsed.Message };
  } catch {
    return {};
  }
}

function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  const send = url.protocol === "http:" ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: "POST", headers, timeout: TIMEOUT_MS }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("SSM did not answer in time.")));
    req.on("error", reject);
    req.end(body);
  });
}
