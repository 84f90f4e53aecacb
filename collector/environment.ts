/**
 * An environment variable the CLI reads: what it sets in `Options` (the collector's options, or the part of them a
 * component owns), and its default as the help shows it.
 */
export interface EnvironmentVariable<Options> {
  name: string;
  help: string;
  default?: string | number;
  apply(options: Options, value: string): void;
}
