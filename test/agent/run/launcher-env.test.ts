import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commandEnv, registerImport, withRegister } from '../../../agent/run/run.js';

describe('extscope-agent run: the environment it gives the command', () => {
  it('imports the register entry by an absolute file URL that exists and holds no space (NODE_OPTIONS splits on spaces)', () => {
    const url = registerImport();
    expect(url).toMatch(/^file:\/\/\/\S+\/register\/register\.(js|ts)$/);
    expect(existsSync(fileURLToPath(url).replace(/\.js$/, '.ts')) || existsSync(fileURLToPath(url))).toBe(true);
  });

  it('adds --import once, after the options already there', () => {
    const option = `--import=${registerImport()}`;
    expect(withRegister(undefined)).toBe(option);
    expect(withRegister('  ')).toBe(option);
    expect(withRegister('--max-old-space-size=512')).toBe(`--max-old-space-size=512 ${option}`);
    expect(withRegister(withRegister('--inspect'))).toBe(`--inspect ${option}`);
  });

  it("keeps the caller's variables, removes what an npx that started it set for itself", () => {
    const env = commandEnv({
      OTEL_SERVICE_NAME: 's',
      npm_config_package: '/x/extscope-agent-0.1.0.tgz',
      npm_config_call: 'c',
      npm_config_registry: 'https://r',
    });
    expect(env).toEqual({ OTEL_SERVICE_NAME: 's', npm_config_registry: 'https://r', NODE_OPTIONS: `--import=${registerImport()}` });
  });
});
