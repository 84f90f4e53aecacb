export declare const PACKAGE_DIRS: { agent: string; collector: string };
export declare function cleanEnv(): Record<string, string>;
export declare function pack(
  which: 'agent' | 'collector',
  destination: string,
): Promise<{ tarball: string; hash: string; name: string; filename: string; files: string[] }>;
export declare const CONTENTS: Record<'agent' | 'collector', { allowed: RegExp[]; required: string[] }>;
export declare function publishDryRun(which: 'agent' | 'collector'): Promise<{ name: string; version: string; files: string[]; stderr: string }>;
