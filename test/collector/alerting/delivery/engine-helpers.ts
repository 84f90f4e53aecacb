import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CollectorOptions } from '../../../../collector/config.js';
import { type TestCollector, startTestCollector } from '../../helpers/collector.js';
export { send } from '../helpers.js';

export async function alertingCollectorWith(
  dir: string,
  rules: string,
  start: number,
  options: Partial<CollectorOptions>,
): Promise<{ collector: TestCollector; clock: { now: number } }> {
  const clock = { now: start };
  const rulesPath = join(dir, 'rules.yaml');
  await writeFile(rulesPath, rules);
  const collector = await startTestCollector(dir, { rulesPath, clock: () => clock.now, alertIntervalMs: 3_600_000, ...options });
  return { collector, clock };
}
