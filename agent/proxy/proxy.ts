export async function runProxy(_args: string[]): Promise<number> {
  process.stderr.write('extscope proxy: not yet\n');
  return 2;
}
