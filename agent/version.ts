/** Instrumentation scope name and version; test/agent/version.test.ts keeps them equal to package.json. */
export const PACKAGE_NAME = 'extscope';
export const PACKAGE_VERSION = '0.1.0';
