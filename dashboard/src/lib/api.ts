/**
 * The page's only door to data: `GET /api/v1/*` on its own origin. With a read token (EXTSCOPE_READ_TOKEN) the
 * token is asked for once, kept for this browser session (sessionStorage, gone when the tab closes) and sent as
 * a bearer header; a collector on loopback without a token needs none.
 */

const TOKEN_KEY = 'extscope.readToken';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** 401: no token, or a wrong one. `rejected` = a token was sent and refused. */
export class AuthRequired extends ApiError {
  constructor(readonly rejected: boolean) {
    super(401, rejected ? 'the read token was not accepted' : 'a read token is required');
  }
}

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage refused (private mode): the token lives until the next load.
  }
  memoryToken = token;
}

let memoryToken: string | null = null;

export type Params = Record<string, string | number | undefined | null>;

function apiUrl(path: string, params: Params = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return `/api/v1/${path}${text === '' ? '' : `?${text}`}`;
}

async function request(path: string, params: Params, accept: string, signal?: AbortSignal): Promise<Response> {
  const token = storedToken() ?? memoryToken;
  const headers: Record<string, string> = { accept };
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(apiUrl(path, params), { headers, credentials: 'omit', cache: 'no-store', ...(signal === undefined ? {} : { signal }) });
  } catch (error) {
    throw new ApiError(0, `the collector did not answer (${(error as Error).message})`);
  }
  if (response.status === 401) throw new AuthRequired(token !== null);
  if (!response.ok) {
    let message = `HTTP ${response.status}`;
    try {
      const body = (await response.json()) as { message?: unknown };
      if (typeof body.message === 'string') message = body.message;
    } catch {
      // Not JSON: the status says it.
    }
    throw new ApiError(response.status, message);
  }
  return response;
}

/** `signal` aborts the request (the collector then stops its read). */
export async function getJson<T>(path: string, params: Params = {}, signal?: AbortSignal): Promise<T> {
  return (await (await request(path, params, 'application/json', signal)).json()) as T;
}

export async function getText(path: string, params: Params = {}): Promise<string> {
  return (await request(path, params, 'text/csv')).text();
}
