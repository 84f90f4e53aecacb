import { MAX_EXTENSION_ID_LENGTH } from './limits.js';

/**
 * Extension identifiers follow the `_meta` key rules with a mandatory prefix: dot-separated labels (letter
 * first, letter or digit last, hyphens inside), a slash, then a name that starts and ends alphanumeric with
 * `-`, `_`, `.` allowed inside. Example: `io.modelcontextprotocol/tasks`.
 */
const LABEL = '[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const NAME = '[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?';
export const EXTENSION_ID_PATTERN = new RegExp(`^${LABEL}(?:\\.${LABEL})*/${NAME}$`);

const MEMO_SIZE = 4096;
const memo = new Map<string, boolean>();

export function isValidExtensionId(id: string, maxLength = MAX_EXTENSION_ID_LENGTH): boolean {
  if (id.length > maxLength) return false;
  // The same few ids arrive on every request: test each distinct one once (bounded: junk ids churn it).
  let valid = memo.get(id);
  if (valid === undefined) {
    valid = EXTENSION_ID_PATTERN.test(id);
    if (memo.size >= MEMO_SIZE) memo.clear();
    memo.set(id, valid);
  }
  return valid;
}
