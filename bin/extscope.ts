#!/usr/bin/env node
// Each command's module is imported when it runs: \`wrap\` and \`proxy\` load the agent package (@extscope/agent)
// alone, never the collector.

const USAGE = `Usage: extscope <command> [options]

Commands:
  collector   Run the collector: OTLP/HTTP and OTLP/gRPC receivers, query API, /metrics, /healthz, /readyz
  wrap        "wrap -- COMMAND [ARGS...]": run a stdio MCP server (any language) and record its requests
  proxy       "proxy --listen HOST:PORT --upstream URL": record a Streamable HTTP MCP server's requests in between
  rules       "rules check FILE...": validate alert rules files
  db backup   Copy the SQLite database consistently, also while the collector runs
  db copy     Copy an SQLite database into PostgreSQL (extscope db copy --help)

  --version   Print the version

Run "extscope collector --help" for the collector's options.
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
  if (command === 'wrap') return (await import('@extscope/agent/wrap')).runWrap(rest);
  if (command === 'proxy') return (await import('@extscope/agent/proxy')).runProxy(rest);
  if (command === 'rules') return (await import('./commands/rules-check.js')).runRules(rest);
  if (command === 'db' && rest[0] === 'backup') return (await import('./commands/db-backup.js')).runDbBackup(rest.slice(1));
  if (command === 'db' && rest[0] === 'copy') return (await import('./commands/db-copy.js')).runDbCopy(rest.slice(1));
  if (command === 'collector') return (await import('./commands/collector.js')).runCollector(rest);
  process.stderr.write(`extscope: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
