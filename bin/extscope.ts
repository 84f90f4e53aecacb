#!/usr/bin/env node
// Each command's module is imported when it runs: `wrap`, `proxy` and `run` are the agent package's own
// commands (`npx @extscope/agent wrap`, without the collector), dispatched by the agent's own table and offered
// here as aliases; they load the agent alone.
import { AGENT_COMMANDS_USAGE, runAgentCommand } from '@extscope/agent/commands';

const USAGE = `Usage: extscope <command> [options]

Commands:
  collector   Run the collector: OTLP/HTTP and OTLP/gRPC receivers, query API, /metrics, /healthz, /readyz
${AGENT_COMMANDS_USAGE}              (wrap, proxy and run are the agent package's commands too: npx @extscope/agent wrap -- …)
  rules       "rules check FILE...": validate alert rules files
  db backup   Copy the SQLite database consistently, also while the collector runs (extscope db backup --help)
  db copy     Copy an SQLite database into PostgreSQL (extscope db copy --help)

  --version   Print the version

Run "extscope collector --help" for the collector's options.
`;

const DB_USAGE = `Usage: extscope db <backup|copy> [options]

  db backup PATH   Copy the SQLite database consistently, also while the collector runs (extscope db backup --help)
  db copy          Copy an SQLite database into PostgreSQL (extscope db copy --help)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    const { COLLECTOR_VERSION } = await import('../collector/version.js');
    process.stdout.write(`extscope ${COLLECTOR_VERSION}\n`);
    return 0;
  }
  const agentCode = await runAgentCommand(command, rest);
  if (agentCode !== undefined) return agentCode;
  if (command === 'rules') return (await import('./commands/rules-check.js')).runRules(rest);
  if (command === 'db' && rest[0] === 'backup') return (await import('./commands/db-backup.js')).runDbBackup(rest.slice(1));
  if (command === 'db' && rest[0] === 'copy') return (await import('./commands/db-copy.js')).runDbCopy(rest.slice(1));
  if (command === 'db') {
    if (rest[0] === undefined || rest[0] === '--help' || rest[0] === '-h') {
      process.stdout.write(DB_USAGE);
      return rest[0] === undefined ? 2 : 0;
    }
    process.stderr.write(`extscope db: unknown subcommand ${JSON.stringify(rest[0])}: db backup or db copy (extscope db --help)\n`);
    return 2;
  }
  if (command === 'collector') return (await import('./commands/collector.js')).runCollector(rest);
  process.stderr.write(`extscope: unknown command ${JSON.stringify(command)}: the commands are collector, wrap, proxy, run, rules and db (extscope --help)\n`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
