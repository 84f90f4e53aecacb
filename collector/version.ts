/** The collector's version, as `extscope_build_info` and `extscope --version` report it; test/collector/version.test.ts keeps it equal to package.json. */
export const COLLECTOR_VERSION = '0.1.0';
