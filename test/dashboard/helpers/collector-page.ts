import type { CollectorOptions } from '../../../collector/index.js';
import { type TestCollector, startTestCollector, tempDir } from '../../collector/helpers/collector.js';
import { type Browser, type Watched, launchBrowser, watchedPage } from './browser.js';

export interface CollectorPage {
  collector: TestCollector;
  watched: Watched;
  /** Closes the browser and the collector, and removes the collector's folder. */
  close(): Promise<void>;
}

/** A real collector in a folder of its own and a watched Chromium page on its origin: a test file's fixture. */
export async function collectorPage(options: Partial<CollectorOptions> = {}): Promise<CollectorPage> {
  const temp = await tempDir();
  let collector: TestCollector | undefined;
  let browser: Browser | undefined;
  const close = async (): Promise<void> => {
    await browser?.close();
    await collector?.close();
    await temp.cleanup();
  };
  try {
    collector = await startTestCollector(temp.dir, options);
    browser = await launchBrowser();
    const watched = await watchedPage(browser.context, collector.url);
    watched.page.setDefaultTimeout(10_000);
    return { collector, watched, close };
  } catch (error) {
    await close();
    throw error;
  }
}
