import { parseArgs } from 'node:util';
import { checkRulesFile, formatRuleErrors } from '../../collector/alerting/rules/load.js';

export const RULES_USAGE = `Usage: extscope rules check FILE...

Checks alert rules files (YAML or JSON) the way the collector reads them: every error with its line, column
and reason. Exits 0 when every file is valid, 1 otherwise (the collector refuses to start on such a file with
the same errors). See docs/alerting.md.
`;

/** `extscope rules check FILE...`, after \`promtool check rules\`. */
export async function runRules(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true });
  } catch (error) {
    process.stderr.write(`extscope rules: ${(error as Error).message}\n\n${RULES_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [subcommand, ...files] = positionals;
  if (values.help === true) {
    process.stdout.write(RULES_USAGE);
    return 0;
  }
  if (subcommand !== 'check' || files.length === 0) {
    process.stderr.write(RULES_USAGE);
    return 2;
  }
  let failed = false;
  for (const file of files) {
    const outcome = await checkRulesFile(file);
    if (outcome.ok) {
      process.stdout.write(`Checking ${file}\n  SUCCESS: ${outcome.rules.rules.length} rules found\n\n`);
    } else {
      process.stderr.write(`Checking ${file}\n  FAILED:\n${formatRuleErrors(file, outcome.errors)}\n\n`);
      failed = true;
    }
  }
  return failed ? 1 : 0;
}
