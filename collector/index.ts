/** The collector, for embedding: start it in process, with the CLI's options. */
export { startCollector, type RunningCollector } from './service.js';
export type { CollectorOptions } from './config.js';
export { ConfigError } from './model/errors.js';
export { SchemaTooNewError } from './store/store.js';
