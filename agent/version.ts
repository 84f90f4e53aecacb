/** Instrumentation scope name and version (kept equal to package.json by a test). */
export const PACKAGE_NAME = 'extscope';
export const PACKAGE_VERSION = '0.1.0';
