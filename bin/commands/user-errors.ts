/**
 * Errors a user can fix, as one line saying what happened and what to do; anything else is a bug and keeps its
 * stack. Listening errors carry the address; database errors already name the (password-free) URL or path.
 * A port the command line chose that cannot be had is a usage mistake (exit 2, as a wrong option); a database that
 * cannot be reached is the environment's (exit 1).
 */

interface SystemError {
  code?: unknown;
  address?: unknown;
  port?: unknown;
  message?: unknown;
}

/** PostgreSQL's SQLSTATE codes and network errors a wrong URL or a stopped server gives, with the fix. */
const DATABASE_HINTS: [RegExp | string, string][] = [
  ['3D000', 'create that database (createdb NAME) or fix the name at the end of the URL'],
  ['28P01', 'check the user and password in the URL'],
  ['28000', 'the server refuses this user from this address: check the user in the URL and the server\u2019s pg_hba.conf'],
  [/ECONNREFUSED/, 'is PostgreSQL running there? Check the host and port in the URL'],
  [/ENOTFOUND|EAI_AGAIN/, 'the host name in the URL does not resolve'],
  [/timeout|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH/i, 'the database host does not answer: is it reachable from here?'],
  [/in use by another process/, 'stop the other collector, or give this one another --db'],
  [/SQLITE_CANTOPEN|unable to open database file|ENOENT|EACCES|EROFS/, 'does the directory exist, and may this user write there?'],
];

function listenMessage(error: SystemError): string | undefined {
  const where = typeof error.address === 'string' && error.port !== undefined ? `${error.address}:${String(error.port)}` : 'the address';
  if (error.code === 'EADDRINUSE')
    return `${where} is already in use (another extscope collector?): stop it, or choose other ports with --port (OTLP/HTTP, API, page) and --grpc-port (OTLP/gRPC, or off)`;
  if (error.code === 'EACCES') return `not allowed to listen on ${where} (ports below 1024 need privileges): choose another with --port or --grpc-port`;
  if (error.code === 'EADDRNOTAVAIL')
    return `${where}: --host is not an address of this machine (127.0.0.1 for this machine only, 0.0.0.0 for every interface)`;
  return undefined;
}

function databaseMessage(error: SystemError & { name?: unknown }): string | undefined {
  const text = typeof error.message === 'string' ? error.message : '';
  const code = typeof error.code === 'string' ? error.code : '';
  const database = error.name === 'StoreUnavailableError' || /^postgres(ql)?:\/\//i.test(text) || /SQLITE_|database/i.test(`${code} ${text}`);
  if (!database) return undefined;
  for (const [pattern, hint] of DATABASE_HINTS) {
    if (typeof pattern === 'string' ? code === pattern : pattern.test(`${code} ${text}`)) return `cannot open the database: ${text.split('\n')[0]}: ${hint}`;
  }
  return undefined;
}

/** The one-line message and exit code for an error the user can fix, or undefined for one that is not theirs. */
export function userError(error: unknown): { message: string; exitCode: 1 | 2 } | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if ((error as { syscall?: unknown }).syscall === 'listen') {
    const message = listenMessage(error);
    return message === undefined ? undefined : { message, exitCode: 2 };
  }
  const message = databaseMessage(error);
  return message === undefined ? undefined : { message, exitCode: 1 };
}
