export declare const PACKAGE_DIRS: { agent: string; collector: string };
export declare function cleanEnv(): Record<string, string>;
export declare function pack(
  which: 'agent' | 'collector',
  destination: string,
): Promise<{ tarball: string; hash: string; name: string; filename: string; files: string[] }>;
