import { Aspects, type CfnElement, type Stack } from "aws-cdk-lib";
import * as apigateway from "aws-cdk-lib/aws-apigatewayv2";
import type * as iam from "aws-cdk-lib/aws-iam";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { AwsSolutionsChecks, NagSuppressions } from "cdk-nag";
import type { IConstruct } from "constructs";
import type { Api, Script, Function as SstFunction } from "sst/constructs";

/** What the stack's audit needs to know to suppress a finding on exactly what it concerns. */
export interface AuditSubjects {
  /**
   * Queues that *are* dead-letter queues (EventBridge targets' and Lambda's on-failure), which
   * no queue names in a redrive policy, so cdk-nag cannot tell.
   */
  deadLetterQueues: readonly sqs.IQueue[];
  /** Roles of functions traced with X-Ray, when the stage traces. */
  tracedRoles: readonly iam.IRole[];
  /** Roles that read the secrets registrations name, and those grants' resources as cdk-nag spells them. */
  registeredSecretReaders: readonly iam.IRole[];
  registeredSecretResources: readonly string[];
  api: Api;
  /** The seed's function and the Script that runs it on deploy (SST's own handler). */
  seed: SstFunction;
  seedScript: Script;
  /** The table, when the stage keeps no point-in-time backups on purpose. */
  tableWithoutBackups?: IConstruct;
}

const SST_MANAGED_POLICY =
  "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole";

/**
 * cdk-nag's AwsSolutions pack over the stage, on every synthesis (`sst deploy` and the stack
 * tests alike). A finding is fixed in the stack, or suppressed here on the one resource it
 * concerns, with the evidence that makes it right; never for the whole stack, and IAM5 only for
 * the exact resource it names.
 */
export function auditStack(stack: Stack, subjects: AuditSubjects): void {
  for (const queue of subjects.deadLetterQueues) {
    NagSuppressions.addResourceSuppressions(queue, [
      {
        id: "AwsSolutions-SQS3",
        reason:
          "This queue is itself a dead-letter queue (an EventBridge target's, or a function's on-failure destination); cdk-nag only recognises queues named in another queue's redrive policy.",
      },
    ]);
  }
  for (const role of subjects.tracedRoles) {
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: "AwsSolutions-IAM5",
          reason:
            "X-Ray's PutTraceSegments and PutTelemetryRecords support no resource-level permissions: AWS requires Resource *.",
          appliesTo: ["Resource::*"],
        },
      ],
      true,
    );
  }
  for (const role of subjects.registeredSecretReaders) {
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: "AwsSolutions-IAM5",
          reason:
            "Registered toolsets name their secrets after the deploy, so they cannot be bound one by one; registrations may only name secrets under this prefix (core's REGISTERED_SECRET_PREFIX), which holds neither the admin key nor a built-in tool's secret.",
          appliesTo: [...subjects.registeredSecretResources],
        },
      ],
      true,
    );
  }
  const routes = subjects.api.node.findAll().filter((c) => c instanceof apigateway.CfnRoute);
  NagSuppressions.addResourceSuppressions(routes, [
    {
      id: "AwsSolutions-APIG4",
      reason:
        "Authorization is in the app: every /v1 route and /mcp checks the caller's API key (packages/http/src/common/auth.ts); /health, /docs and /openapi.json are public on purpose, and a browser connecting an account (GET /connect/{provider} and its /callback) carries a single-use ticket or OAuth state the app checks instead.",
    },
  ]);
  if (subjects.tableWithoutBackups) {
    NagSuppressions.addResourceSuppressions(subjects.tableWithoutBackups, [
      {
        id: "AwsSolutions-DDB3",
        reason:
          "This stage's data is disposable (data.pointInTimeRecovery is false in its stack config); production stages keep point-in-time backups.",
      },
    ]);
  }

  // SST v2's own deploy-time functions: the stack's custom resource handler and the Script that
  // runs the seed. Their code, role and runtime are SST's (nodejs22.x, still supported by
  // Lambda); they run only while CloudFormation deploys, never on a request.
  const sstInternal = (construct: IConstruct, extra: { id: string; appliesTo: string[] }[]) =>
    NagSuppressions.addResourceSuppressions(
      construct,
      [
        {
          id: "AwsSolutions-L1",
          reason:
            "SST v2's own deploy-time function: SST sets its runtime (nodejs22.x, supported by Lambda); it never serves a request.",
        },
        {
          id: "AwsSolutions-IAM4",
          reason:
            "SST v2's own deploy-time function, with the basic execution role SST gives it (its logs only).",
          appliesTo: [SST_MANAGED_POLICY],
        },
        ...extra.map((finding) => ({
          ...finding,
          reason:
            "SST's Script may invoke any version of the seed it runs on deploy, and nothing else.",
        })),
      ],
      true,
    );
  const handler = stack.node.tryFindChild("CustomResourceHandler");
  if (handler) sstInternal(handler, []);
  const seedId = stack.getLogicalId(subjects.seed.node.defaultChild as CfnElement);
  sstInternal(subjects.seedScript, [
    { id: "AwsSolutions-IAM5", appliesTo: [`Resource::<${seedId}.Arn>:*`] },
  ]);

  Aspects.of(stack).add(new AwsSolutionsChecks({ verbose: true }));
}
