import { runCli } from "@toolbus/client/cli";

/** `toolbus <argv> --endpoint <endpoint>` in this process, with its output and exit code. */
export async function runToolbusCli(endpoint: string, argv: string[], key: string) {
  let stdout = "";
  let stderr = "";
  const code = await runCli([...argv, "--endpoint", endpoint], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: (async function* () {})(),
    env: { TOOLBUS_API_KEY: key },
    cwd: process.cwd(),
  });
  return { code, stdout, stderr };
}
