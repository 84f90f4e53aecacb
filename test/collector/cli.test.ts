import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, DEFAULT_RETENTION, ENVIRONMENT } from '../../collector/config.js';
import { runCli } from './helpers/collector.js';

describe('extscope collector (the CLI)', () => {
  it('lists every environment variable it reads in its help, with the defaults the configuration has', async () => {
    const { code, stdout } = await runCli(['collector', '--help']);
    expect(code).toBe(0);
    for (const variable of ENVIRONMENT) {
      const line = stdout.split('\n').find((text) => text.trimStart().startsWith(`${variable.name} `));
      expect(line, variable.name).toBeDefined();
      if (variable.default !== undefined) expect(line, variable.name).toMatch(new RegExp(`\\(default ${String(variable.default).replace(/[./]/g, '\\$&')}\\)$`));
    }
    // …and those are the configuration's own.
    expect(stdout).toMatch(new RegExp(`EXTSCOPE_DEDUP_HOURS .*\\(default ${DEFAULT_RETENTION.dedupHours}\\)`));
    expect(stdout).toMatch(new RegExp(`EXTSCOPE_MAX_BODY_BYTES .*\\(default ${DEFAULT_LIMITS.maxBodyBytes}\\)`));
  });

  it('refuses a malformed setting with a message naming it, and exit code 2', async () => {
    for (const [env, message] of [
      [{ EXTSCOPE_DEDUP_HOURS: 'soon' }, /EXTSCOPE_DEDUP_HOURS must be a number \(got "soon"\)/],
      [{ EXTSCOPE_SYNCHRONOUS: 'fast' }, /synchronous must be normal or full \(got "fast"\)/],
    ] as const) {
      const { code, stderr } = await runCli(['collector', '--port', '0', '--db', '/nonexistent/never.db'], env);
      expect(code).toBe(2);
      expect(stderr).toMatch(message);
    }
    const port = await runCli(['collector', '--port', 'x']);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/--port must be a number \(got "x"\)/);
  });
});
