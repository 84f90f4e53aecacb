import { describe, expect, it } from 'vitest';
import { stderrBesidesRecoveredExports } from './processes.js';

const FAILS = 'extscope: exporting metrics to http://127.0.0.1:1/v1/metrics fails (Request timed out): is the collector running?';
const AGAIN = 'extscope: exporting metrics to http://127.0.0.1:1/v1/metrics works again (1 export had failed)';

describe('stderrBesidesRecoveredExports', () => {
  it('drops a failing export answered by its "works again" line, and nothing else', () => {
    expect(stderrBesidesRecoveredExports(`${FAILS}\n${AGAIN}\n`)).toBe('');
    expect(stderrBesidesRecoveredExports(`boom\n${FAILS}\n${AGAIN}\n`)).toBe('boom\n');
  });

  it('keeps a failure never answered, an answer for another endpoint, and a "works again" before any failure', () => {
    expect(stderrBesidesRecoveredExports(`${FAILS}\n`)).toBe(`${FAILS}\n`);
    const elsewhere = AGAIN.replace('127.0.0.1:1', '127.0.0.1:2');
    expect(stderrBesidesRecoveredExports(`${FAILS}\n${elsewhere}`)).toBe(`${FAILS}\n${elsewhere}`);
    expect(stderrBesidesRecoveredExports(`${AGAIN}\n${FAILS}`)).toBe(`${AGAIN}\n${FAILS}`);
  });
});
