#!/usr/bin/env node
// The agent package's own command: wrap and proxy for servers in any language, run for Node.js servers started by
// npx. Each command's module is imported when it runs; nothing here needs the collector.
import { PACKAGE_VERSION } from '../version.js';

const USAGE = `Usage: extscope-agent <command> [options]     (npx @extscope/agent <command> …)

Commands:
  wrap        "wrap -- COMMAND [ARGS...]": run a stdio MCP server (any language) and record its requests
  proxy       "proxy --listen HOST:PORT --upstream URL": record a Streamable HTTP MCP server's requests in between
  run         "run -- COMMAND [ARGS...]": run a Node.js MCP server (npx-launched too) with the agent loaded

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
  if (command === 'wrap') return (await import('../wrap/wrap.js')).runWrap(rest);
  if (command === 'proxy') return (await import('../proxy/proxy.js')).runProxy(rest);
  if (command === 'run') return (await import('../run/run.js')).runWithAgent(rest);
  process.stderr.write(`extscope-agent: unknown command ${JSON.stringify(command)}: the commands are wrap, proxy and run (extscope-agent --help)\n`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
