// The collector as a child process (the built CLI), for the collector benchmarks. Resolves with its URL once
// it logs that it listens.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../../dist/bin/extscope.js', import.meta.url));

export function startCollectorChild(dbPath, { env = {}, nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'collector', '--port', '0', '--db', dbPath], {
    env: { ...process.env, EXTSCOPE_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match) resolve({ child, url: match[1] });
    });
    child.once('exit', (code) => reject(new Error(`collector exited ${code}: ${output}`)));
  });
}
