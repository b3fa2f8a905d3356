import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Template } from "aws-cdk-lib/assertions";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import { App, getStack } from "sst/constructs";
import { initProject, setProject, useProject } from "sst/project.js";
import config from "../sst.config";
import { Toolbus } from "./Toolbus";

export interface Synthesized {
  stage: string;
  template: Template;
  /** Where the cloud assembly was written (a temp dir). */
  outdir: string;
  /** What synthesis reported: cdk-nag's findings and CDK's own errors and warnings, one line each. */
  findings: string[];
  /** Each of our functions' bundle (SST's build output), by handler path (`functions/api`). */
  bundles: Map<string, string>;
  durationMs: number;
  /** Removes `outdir` (and `.sst/`, if synthesizing created it). */
  cleanup(): Promise<void>;
}

/** Whether `.sst/` existed before this process first synthesized, per project root. */
const sstDirExisted = new Map<string, boolean>();

/**
 * SST's function builder keeps the project it first saw, so every synthesis in a process
 * bundles into the same artifacts directory: one temp dir per process, removed with the last
 * synthesis that uses it.
 */
let sharedArtifacts: { dir: string; users: number } | undefined;

/**
 * Synthesizes one stage the way `sst deploy` does up to CloudFormation — functions bundled by
 * esbuild, nothing sent to AWS — into a temp dir. No AWS account or credentials are used: the
 * account is a placeholder. Needs NODE_ENV=test (vitest sets it): SST skips its bootstrap
 * lookup, the only step that would call AWS.
 */
export async function synthesizeStage(
  stage: string,
  options: { context?: Record<string, unknown>; root?: string } = {},
): Promise<Synthesized> {
  const started = performance.now();
  const root = resolve(options.root ?? join(import.meta.dirname, ".."));
  const outdir = await mkdtemp(join(tmpdir(), `toolbus-synth-${stage}-`));
  sharedArtifacts ??= { dir: await mkdtemp(join(tmpdir(), "toolbus-bundles-")), users: 0 };
  const artifacts = sharedArtifacts;
  artifacts.users += 1;
  let cleaned = false;
  const sstDir = join(root, ".sst");
  if (!sstDirExisted.has(root)) sstDirExisted.set(root, existsSync(sstDir));
  // SST's debug log stays in .sst/ (git-ignored); cleanup removes it if we made it.
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    await rm(outdir, { recursive: true, force: true });
    artifacts.users -= 1;
    if (artifacts.users === 0) {
      if (sharedArtifacts === artifacts) sharedArtifacts = undefined;
      await rm(artifacts.dir, { recursive: true, force: true });
    }
    if (sstDirExisted.get(root) === false) await rm(sstDir, { recursive: true, force: true });
  };
  try {
    await initProject({ stage, root });
    const project = useProject();
    // SST writes generated types and bundles under .sst/: keep them in the temp dir instead.
    setProject({ ...project, paths: { ...project.paths, out: outdir, artifacts: artifacts.dir } });
    const app = new App(
      {
        mode: "deploy",
        name: project.config.name,
        stage,
        region: "us-east-1",
        account: "123456789012",
      },
      { outdir, ...(options.context ? { context: options.context } : {}) },
    );
    await config.stacks(app);
    await app.finish();
    const stack = getStack(Toolbus);
    const template = Template.fromStack(stack);
    // After the build, a function's handler is its bundle's path inside its artifact dir.
    const bundles = new Map(
      stack.getAllFunctions().flatMap((fn) => {
        const handler = (fn.node.defaultChild as CfnFunction).handler ?? "";
        if (!handler.startsWith("functions/")) return [];
        const path = handler.replace(/\.handler$/, "");
        return [[path, join(artifacts.dir, fn.node.addr, `${path}.mjs`)] as const];
      }),
    );
    return {
      stage,
      template,
      outdir,
      findings: await reportedFindings(outdir),
      bundles,
      durationMs: performance.now() - started,
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** Errors and warnings in a cloud assembly's manifest (`<path> <message>`), cdk-nag's among them. */
async function reportedFindings(outdir: string): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(outdir, "manifest.json"), "utf8")) as {
    artifacts?: Record<string, { metadata?: Record<string, { type: string; data?: unknown }[]> }>;
  };
  return Object.values(manifest.artifacts ?? {}).flatMap((artifact) =>
    Object.entries(artifact.metadata ?? {}).flatMap(([path, entries]) =>
      entries
        .filter((entry) => entry.type === "aws:cdk:error" || entry.type === "aws:cdk:warning")
        .map((entry) => `${path} ${String(entry.data)}`),
    ),
  );
}
