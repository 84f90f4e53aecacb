import { ApiError, AuthRequired, type Params, getJson } from './api.js';
import type { Group, State } from './state.js';

/** What every view gets: the state, navigation, and data loads cached until the next refresh. */
export interface Context {
  readonly state: State;
  /** Changes the state: `push` adds a history entry (views, filters), `replace` does not (typing in a text filter). */
  navigate(changes: Partial<State>, mode?: 'push' | 'replace'): void;
  /** A cached GET of `/api/v1/<path>` (the cache is emptied at each refresh). */
  load<T>(path: string, params?: Params): Promise<T>;
  /**
   * Starts a GET into the cache that nothing waits for yet; a `load` of it later takes it over. It is aborted at the
   * next refresh, or at the next state change after which `keep` says it is no longer wanted.
   */
  prefetch(path: string, params: Params, keep: (next: State) => boolean): void;
  /** False once a newer render has started: a slow answer must not overwrite a newer view. */
  isCurrent(): boolean;
  /** Data arrived: updates the "last updated" time. */
  loaded(): void;
  /** Shows the token form or an error in place of the view. */
  fail(error: unknown): void;
}

export interface ViewModule {
  /** Builds the view's persistent parts (toolbars keep their focus across updates) into `root`. */
  mount(root: HTMLElement, context: Context): void;
  /** Renders the data for the current state. */
  update(context: Context): Promise<void>;
  /**
   * The client names the client filter offers, from data the view loads anyway (cached: no extra query). Views the
   * client filter does not apply to have none.
   */
  clientNames?(context: Context): Promise<string[]>;
  /** The row groupings the view follows: "Rows by" offers these, and is not shown on a view without any. */
  readonly rowsBy?: readonly Group[];
}

export const namesOf = (rows: readonly { name: string | null }[]): string[] =>
  [...new Set(rows.map((row) => row.name).filter((name): name is string => name !== null))].sort();

export class Loader {
  private cache = new Map<string, Promise<unknown>>();
  /** Prefetched entries no `load` has taken over yet: what aborts them, and whether a state still wants them. */
  private prefetches = new Map<string, { controller: AbortController; keep: (next: State) => boolean }>();

  load<T>(path: string, params: Params = {}): Promise<T> {
    const key = `${path}?${JSON.stringify(params)}`;
    // Taken over: awaited by a view from now on, so never aborted.
    this.prefetches.delete(key);
    let entry = this.cache.get(key);
    if (entry === undefined) {
      entry = getJson<T>(path, params);
      // A failed load is not kept: the next render asks again.
      entry.catch(() => this.cache.delete(key));
      this.cache.set(key, entry);
    }
    return entry as Promise<T>;
  }

  prefetch(path: string, params: Params, keep: (next: State) => boolean): void {
    const key = `${path}?${JSON.stringify(params)}`;
    if (this.cache.has(key)) return;
    const controller = new AbortController();
    const entry = getJson(path, params, controller.signal);
    entry.catch(() => {
      if (this.cache.get(key) === entry) this.cache.delete(key);
      this.prefetches.delete(key);
    });
    this.cache.set(key, entry);
    this.prefetches.set(key, { controller, keep });
  }

  /** Aborts the prefetches the new state does not want (the collector stops reading them). */
  dropPrefetches(next: State): void {
    for (const [key, { controller, keep }] of this.prefetches) {
      if (keep(next)) continue;
      controller.abort();
      this.prefetches.delete(key);
      this.cache.delete(key);
    }
  }

  clear(): void {
    for (const { controller } of this.prefetches.values()) controller.abort();
    this.prefetches = new Map();
    this.cache = new Map();
  }
}

export const isAuthError = (error: unknown): error is AuthRequired => error instanceof AuthRequired;
export const isNotFound = (error: unknown): boolean => error instanceof ApiError && error.status === 404;
