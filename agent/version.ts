/** Instrumentation scope name and version; test/agent/version.test.ts keeps them equal to agent/package.json. */
export const PACKAGE_NAME = '@extscope/agent';
export const PACKAGE_VERSION = '0.1.0';
