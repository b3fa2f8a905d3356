import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ssmParameterFetcher } from "../packages/core/src/ssm-parameters";
import { verifySignature } from "../packages/local/src/bus/sigv4";

const credentials = { accessKeyId: "AKIDSSMTEST", secretAccessKey: "ssm-test-secret" };

interface Seen {
  headers: IncomingHttpHeaders;
  body: string;
  signatureError?: string;
}

/** SSM's GetParameters over JSON 1.1, checking each request's SigV4 as AWS would. */
let answers: Array<{ status: number; body: unknown }> = [];
const seen: Seen[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => {
    body += chunk;
  });
  req.on("end", async () => {
    const entry: Seen = { headers: req.headers, body };
    try {
      await verifySignature(
        { method: req.method ?? "", url: req.url ?? "/", headers: req.headers, body },
        credentials,
      );
    } catch (error) {
      entry.signatureError = (error as Error).message;
    }
    seen.push(entry);
    const next = answers.shift() ?? {
      status: 200,
      body: {
        Parameters: (JSON.parse(body).Names as string[]).map((Name) => ({
          Name,
          Value: `value of ${Name}`,
        })),
        InvalidParameters: [],
      },
    };
    res.writeHead(next.status, { "content-type": "application/x-amz-json-1.1" });
    res.end(JSON.stringify(next.body));
  });
});
let endpoint: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const env = () => ({
  AWS_REGION: "eu-west-1",
  AWS_ACCESS_KEY_ID: credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  AWS_SESSION_TOKEN: "session-token",
  AWS_ENDPOINT_URL_SSM: endpoint,
});

describe("reading SSM parameters without SSM's SDK client", () => {
  it("sends GetParameters with decryption, signed with the function's credentials", async () => {
    seen.length = 0;
    const result = await ssmParameterFetcher(env())(["/sst/app/dev/Secret/A/value"]);
    expect(result.Parameters).toEqual([
      { Name: "/sst/app/dev/Secret/A/value", Value: "value of /sst/app/dev/Secret/A/value" },
    ]);
    const [request] = seen;
    expect(request?.signatureError).toBeUndefined();
    expect(request?.headers["x-amz-target"]).toBe("AmazonSSM.GetParameters");
    expect(request?.headers["x-amz-security-token"]).toBe("session-token");
    expect(request?.headers.authorization).toMatch(/\/eu-west-1\/ssm\/aws4_request/);
    expect(JSON.parse(request?.body ?? "{}")).toEqual({
      Names: ["/sst/app/dev/Secret/A/value"],
      WithDecryption: true,
    });
  });

  it("is refused by the signature check when signed with another secret", async () => {
    seen.length = 0;
    await ssmParameterFetcher({ ...env(), AWS_SECRET_ACCESS_KEY: "not-the-secret" })(["/a"]);
    expect(seen[0]?.signatureError).toMatch(/does not match/);
  });

  it("tries a throttled request again, and gives up at once on a denial, naming it", async () => {
    seen.length = 0;
    answers = [{ status: 400, body: { __type: "ThrottlingException", message: "Rate exceeded" } }];
    const result = await ssmParameterFetcher(env())(["/b"]);
    expect(result.Parameters?.[0]?.Value).toBe("value of /b");
    expect(seen).toHaveLength(2);

    seen.length = 0;
    answers = [
      {
        status: 400,
        body: { __type: "com.amazonaws#AccessDeniedException", message: "not allowed" },
      },
    ];
    await expect(ssmParameterFetcher(env())(["/c"])).rejects.toThrow(
      /400 AccessDeniedException: not allowed/,
    );
    expect(seen).toHaveLength(1);
  });

  it("fails clearly without credentials in the environment", async () => {
    const { AWS_ACCESS_KEY_ID: _id, ...rest } = env();
    await expect(ssmParameterFetcher(rest)(["/d"])).rejects.toThrow(/No AWS credentials/);
  });
});
