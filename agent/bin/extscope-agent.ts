#!/usr/bin/env node
// The agent package's own command: wrap and proxy for servers in any language, run for Node.js servers started by
// npx (commands.ts; the collector's `extscope` offers the same). Nothing here needs the collector.
import { PACKAGE_VERSION } from '../version.js';
import { AGENT_COMMANDS_USAGE, runAgentCommand } from './commands.js';

const USAGE = `Usage: extscope-agent <command> [options]     (npx @extscope/agent <command> …)

Commands:
${AGENT_COMMANDS_USAGE}
  --version   Print the version

Run "extscope-agent <command> --help" for a command's options. Telemetry goes where the standard OTEL_*
variables say (default http://localhost:4318, a collector on this machine).
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`extscope-agent ${PACKAGE_VERSION}\n`);
    return 0;
  }
  const code = await runAgentCommand(command, rest);
  if (code !== undefined) return code;
  process.stderr.write(`extscope-agent: unknown command ${JSON.stringify(command)}: the commands are wrap, proxy and run (extscope-agent --help)\n`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
