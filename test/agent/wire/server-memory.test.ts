import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServerMemory } from '../../../agent/wire/server-memory.js';

const SERVER = { name: 'shop', version: '1.2.0' };
const CAPABILITIES = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

describe('what a wrapped server advertised, remembered for its next process', () => {
  let dir: string;
  let errors: unknown[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'extscope-memory-'));
    errors = [];
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const memory = (command: string[], now = Date.now, directory = join(dir, 'memory')) => new ServerMemory(command, (error) => errors.push(error), now, directory);

  it('is read by the next process of the same command, for the server that names itself the same only', () => {
    memory(['python', 'server.py']).remember(SERVER, CAPABILITIES);
    const next = memory(['python', 'server.py']);
    expect(next.capabilitiesOf(SERVER)).toEqual(CAPABILITIES);
    expect(next.capabilitiesOf({ name: 'shop', version: '1.3.0' })).toBeUndefined();
    expect(next.capabilitiesOf({ name: 'other', version: '1.2.0' })).toBeUndefined();
    expect(memory(['python', 'other.py']).capabilitiesOf(SERVER)).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('is not used ten minutes after it was written', () => {
    let now = Date.now();
    memory(['srv'], () => now).remember(SERVER, CAPABILITIES);
    now += 10 * 60_000 + 1;
    expect(memory(['srv'], () => now).capabilitiesOf(SERVER)).toBeUndefined();
  });

  it('a corrupt file, or a link in place of the directory, is nothing remembered: counted, never thrown', async () => {
    memory(['srv']).remember(SERVER, CAPABILITIES);
    const { readdirSync } = await import('node:fs');
    const [file] = readdirSync(join(dir, 'memory'));
    await writeFile(join(dir, 'memory', file!), '{"savedAt": 1, "capabilities": ');
    expect(memory(['srv']).capabilitiesOf(SERVER)).toBeUndefined();
    expect(errors).toHaveLength(1);
    symlinkSync(join(dir, 'memory'), join(dir, 'linked'));
    const linked = memory(['srv'], Date.now, join(dir, 'linked'));
    linked.remember(SERVER, CAPABILITIES);
    expect(linked.capabilitiesOf(SERVER)).toBeUndefined();
  });
});
