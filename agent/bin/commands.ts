// The agent package's commands, in one place for both programs that offer them: `extscope-agent` (this package's
// own) and `extscope` (the collector's, where they are aliases). Each command's module is imported when it runs.

/** What each command does, as both programs' `--help` lists it. */
export const AGENT_COMMANDS_USAGE = `  wrap        "wrap -- COMMAND [ARGS...]": run a stdio MCP server (any language) and record its requests
  proxy       "proxy --listen HOST:PORT --upstream URL": record a Streamable HTTP MCP server's requests in between
  run         "run -- COMMAND [ARGS...]": run a Node.js MCP server (npx-launched too) with the agent loaded
`;

type Command = (args: string[]) => Promise<number>;

const COMMANDS = new Map<string, () => Promise<Command>>([
  ['wrap', async () => (await import('../wrap/wrap.js')).runWrap],
  ['proxy', async () => (await import('../proxy/proxy.js')).runProxy],
  ['run', async () => (await import('../run/run.js')).runWithAgent],
]);

/** Runs the agent's `command` with `args`; resolves with its exit code (`undefined`: `command` is not the agent's). */
export async function runAgentCommand(command: string, args: string[]): Promise<number | undefined> {
  const load = COMMANDS.get(command);
  return load === undefined ? undefined : (await load())(args);
}
