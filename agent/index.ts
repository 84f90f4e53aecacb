export { ExtscopeInstrumentation, type PatchStatus, instrumentServer } from './instrumentation.js';
export type { ExtscopeInstrumentationConfig, ServerIdentity } from './types.js';
export { shutdown } from './register/active-agent.js';
export * as contract from '../contract/index.js';
