import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../../support/otlp-sink.js';
import { ROOT, agentEnv, fixture } from '../../support/processes.js';

const run = promisify(execFile);

let sink: OtlpSink;
beforeAll(async () => {
  sink = await startOtlpSink();
});
afterAll(() => sink.close());

describe('the startup self-check of @extscope/agent/register', () => {
  /** Runs a node command with a short self-check delay; expects nothing on stdout and returns stderr's lines. */
  async function selfCheckLines(args: string[], cwd: string): Promise<string[]> {
    const { stdout, stderr } = await run(process.execPath, args, { cwd, env: agentEnv(sink.url, { EXTSCOPE_SELF_CHECK_MS: '200' }), timeout: 30_000 });
    expect(stdout).toBe('');
    return stderr.trim().split('\n');
  }

  it('says once on stderr when the MCP SDK was loaded before @extscope/agent/register', async () => {
    expect(await selfCheckLines([fixture('late-register.cjs')], ROOT)).toEqual([
      "extscope: @modelcontextprotocol/server was loaded where extscope's hooks could not see it (before @extscope/agent/register?); its requests are not recorded.",
    ]);
  });

  it('says once on stderr when the loaded MCP SDK is a major it does not support', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'extscope-selfcheck-'));
    try {
      const pkg = join(dir, 'node_modules', '@modelcontextprotocol', 'server');
      await mkdir(pkg, { recursive: true });
      await writeFile(
        join(pkg, 'package.json'),
        JSON.stringify({ name: '@modelcontextprotocol/server', version: '9.0.0', type: 'module', exports: './index.js' }),
      );
      await writeFile(join(pkg, 'index.js'), 'export class Server { async connect() {} }\nexport class McpServer { async connect() {} }\n');
      await writeFile(
        join(dir, 'app.mjs'),
        "import { McpServer } from '@modelcontextprotocol/server';\nawait new McpServer().connect({});\nsetTimeout(() => {}, 600);\n",
      );
      const register = pathToFileURL(join(ROOT, 'agent', 'dist', 'agent', 'register', 'register.js')).href;
      expect(await selfCheckLines(['--import', register, join(dir, 'app.mjs')], dir)).toEqual([
        'extscope: @modelcontextprotocol/server@9.0.0 is loaded but not supported (supported: @modelcontextprotocol/server 2.x, @modelcontextprotocol/sdk 1.x); its requests are not recorded.',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
