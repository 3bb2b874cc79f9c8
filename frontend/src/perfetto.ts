// Handing a trace to the Perfetto UI (https://ui.perfetto.dev) with one span selected and the view
// zoomed around it: the documented deep-link protocol. The window is opened on the user's click
// (so no popup blocker stops it) at a route that carries the span, the trace is fetched from the
// Advisor's own `trace` route, 'PING' is posted until the window answers 'PONG', and then the trace
// goes over as {perfetto: {buffer, title, fileName}}. Nothing is sent anywhere before a click; where
// Perfetto cannot be reached (offline, a blocked window) the caller is told so and offers the file.

import type { EvidenceSpan } from "./types";

export const PERFETTO_ORIGIN = "https://ui.perfetto.dev";
/** localStorage key that points the hand-off at another Perfetto (a self-hosted one, or a test page). */
export const PERFETTO_ORIGIN_KEY = "advisor_perfetto_origin";
export const PING_EVERY_MS = 50;
export const GIVE_UP_AFTER_MS = 20000;

export type HandOffState = "opening" | "sent" | "unreachable" | "failed";

/** Where Perfetto is: the public UI unless localStorage names another origin (scheme://host[:port]). */
export function perfettoOrigin(): string {
  try {
    const configured = window.localStorage.getItem(PERFETTO_ORIGIN_KEY);
    if (configured && /^https?:\/\/[^/?#\s]+$/.test(configured)) return configured;
  } catch {
    // storage can be off in a sandboxed frame: the default then
  }
  return PERFETTO_ORIGIN;
}

/** Perfetto's route arguments for a span, in its ns (a JSON trace's µs × 1000): the view from the
 * span's length (at least 1 ms) before it to as much after, and the slice selected by ts, dur, pid
 * and tid. */
export function perfettoRoute(span: EvidenceSpan): string {
  const start = Math.round(span.ts_us * 1000);
  const dur = Math.round(span.dur_us * 1000);
  const pad = Math.max(dur, 1_000_000);
  const args = new URLSearchParams({
    visStart: String(start - pad),
    visEnd: String(start + dur + pad),
    ts: String(start),
    dur: String(dur),
    pid: String(span.pid),
    tid: String(span.tid),
  });
  return `/#!/?${args.toString()}`;
}

/** Resolves true once `win` (at `origin`) answers 'PONG', false after GIVE_UP_AFTER_MS or when it closes. */
function handshake(win: Window, origin: string): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    const done = (ok: boolean): void => {
      window.clearInterval(timer);
      window.removeEventListener("message", onMessage);
      resolve(ok);
    };
    const onMessage = (ev: MessageEvent): void => {
      if (ev.source === win && ev.origin === origin && ev.data === "PONG") done(true);
    };
    const timer = window.setInterval(() => {
      if (win.closed || Date.now() - started > GIVE_UP_AFTER_MS) return done(false);
      try {
        win.postMessage("PING", origin);
      } catch {
        // the window is still on another origin (loading): try again on the next tick
      }
    }, PING_EVERY_MS);
    window.addEventListener("message", onMessage);
  });
}

/**
 * Open Perfetto on `span` of the trace at `traceHref` (the `trace` route). Must be called from the
 * click itself. `report` hears how it went; on "unreachable" or "failed" the caller offers the file.
 */
export async function openInPerfetto(
  span: EvidenceSpan,
  traceHref: string,
  title: string,
  fileName: string,
  report: (state: HandOffState, detail?: string) => void,
): Promise<void> {
  const origin = perfettoOrigin();
  const win = window.open(origin + perfettoRoute(span), "_blank");
  if (!win) {
    report("unreachable", "the browser did not open the Perfetto window");
    return;
  }
  report("opening");
  const trace = fetch(traceHref).then(async (resp) => {
    if (!resp.ok) throw new Error(`the trace route answered ${resp.status}`);
    return resp.arrayBuffer();
  });
  let buffer: ArrayBuffer;
  try {
    const [ready, data] = await Promise.all([handshake(win, origin), trace]);
    if (!ready) {
      report("unreachable", `${origin} did not answer`);
      return;
    }
    buffer = data;
  } catch (e) {
    report("failed", e instanceof Error ? e.message : String(e));
    return;
  }
  win.postMessage({ perfetto: { buffer, title, fileName } }, origin, [buffer]);
  report("sent");
}
