// Fetch JSON from the plugin routes. The report and diff routes answer 202 {"status":"running"}
// while an analysis runs; this module polls until the answer is final and turns every failure
// (4xx JSON, a non-JSON error page, a network error, a timeout) into one readable message.

export type ApiResult<T> = { ok: true; data: T } | { ok: false; status: number; error: string };

export interface FetchLike {
  (url: string): Promise<{ status: number; text(): Promise<string> }>;
}

export interface PollOptions {
  fetchFn?: FetchLike;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Called after each 202 with the time waited so far and the answer's body (its `progress`). */
  onPending?: (elapsedMs: number, body: unknown) => void;
  /** Give up after this long (default 10 minutes). */
  timeoutMs?: number;
  /** Stop polling when this returns true (the user picked another run). */
  cancelled?: () => boolean;
}

export const CANCELLED = "cancelled";

/** 0.5 s, 1 s, 1.5 s, then every 2 s. */
export function pollDelay(attempt: number): number {
  return Math.min(2000, 500 * (attempt + 1));
}

export function errorMessage(status: number, body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === "object" && "error" in parsed) {
      const e = (parsed as { error: unknown }).error;
      if (typeof e === "string" && e.trim() !== "") return e;
    }
  } catch {
    // not JSON: fall through
  }
  const text = body.replace(/\s+/g, " ").trim().slice(0, 200);
  return `The server answered HTTP ${status}${text ? `: ${text}` : ""}`;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function getJson<T>(url: string, opts: PollOptions = {}): Promise<ApiResult<T>> {
  const fetchFn: FetchLike = opts.fetchFn ?? ((u: string) => fetch(u, { headers: { Accept: "application/json" } }));
  const sleep = opts.sleep ?? defaultSleep;
  const now = opts.now ?? (() => Date.now());
  const timeoutMs = opts.timeoutMs ?? 10 * 60 * 1000;
  const start = now();
  for (let attempt = 0; ; attempt++) {
    if (opts.cancelled?.()) return { ok: false, status: 0, error: CANCELLED };
    let status: number;
    let body: string;
    try {
      const resp = await fetchFn(url);
      status = resp.status;
      body = await resp.text();
    } catch (e) {
      return { ok: false, status: 0, error: `Could not reach the TensorBoard server (${String(e)})` };
    }
    if (status === 202) {
      const waited = now() - start;
      if (waited >= timeoutMs) {
        return { ok: false, status, error: `The analysis is still running after ${Math.round(waited / 1000)} s; try again later.` };
      }
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(body);
      } catch {
        // a 202 without JSON: no progress to show
      }
      opts.onPending?.(waited, parsed);
      await sleep(pollDelay(attempt));
      continue;
    }
    if (status < 200 || status >= 300) return { ok: false, status, error: errorMessage(status, body) };
    try {
      return { ok: true, data: JSON.parse(body) as T };
    } catch {
      return { ok: false, status, error: `The server answered HTTP ${status} with something that is not JSON.` };
    }
  }
}
