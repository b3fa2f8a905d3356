import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseStageConfig } from "../../config";
import { createHttpClient } from "../../outbound/client";
import { withProbe } from "../../outbound/probe";
import { checkCapabilities, networkCapability } from "./detectors";

const context = (outbound: object) => ({
  config: parseStageConfig({ outbound }),
  secret: () => undefined,
});

describe("the network capability", () => {
  let listening: Server;
  let open: number;
  let closed: number;

  beforeAll(async () => {
    listening = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
    open = (listening.address() as { port: number }).port;
    // A port that was free a moment ago: nothing listens there.
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    closed = (gone.address() as { port: number }).port;
    await new Promise((resolve) => gone.close(resolve));
  });
  afterAll(() => new Promise((resolve) => listening.close(resolve)));

  const check = async (outbound: object) =>
    (
      await checkCapabilities(
        [networkCapability],
        // Verification runs when an outbound client is given, as on a capability refresh.
        {
          ...context(outbound),
          http: withProbe(
            createHttpClient(context(outbound).config.outbound),
            context(outbound).config.outbound,
          ),
        },
        new Date(),
      )
    )[0];

  it("is there when its probe host accepts a connection", async () => {
    expect(await check({ networkProbe: { host: "127.0.0.1", port: open } })).toMatchObject({
      available: true,
      source: `probe:127.0.0.1:${open}`,
    });
  });

  it("is missing, with the reason, when the probe host cannot be reached", async () => {
    expect(await check({ networkProbe: { host: "127.0.0.1", port: closed } })).toMatchObject({
      available: false,
      reason: `No outbound network: 127.0.0.1:${closed} could not be reached (ECONNREFUSED).`,
    });
  });

  it("is missing without a probe when the stage turns the network off, and trusted when told not to probe", async () => {
    expect(await check({ networkEnabled: false })).toMatchObject({ available: false });
    expect(await check({ networkProbe: false })).toMatchObject({
      available: true,
      source: "config:outbound.networkEnabled",
    });
  });

  it("is assumed from configuration only until verified", () => {
    const detected = networkCapability.detect(
      context({ networkProbe: { host: "127.0.0.1", port: closed } }),
    );
    expect(detected).toEqual({ available: true, source: "config:outbound.networkEnabled" });
  });
});
