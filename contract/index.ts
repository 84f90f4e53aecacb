export * from './attributes.js';
export * from './extension-id.js';
export * from './limits.js';
export * from './metrics.js';
export * from './negotiation.js';
export * from './values.js';
export { renderContract, DOC_BEGIN, DOC_END } from './doc.js';
