// What the tab shows, kept in the URL so a view can be reloaded and shared. Two places:
// - TensorBoard's page hash, beside its own keys: `#advisor&advisor_view=diff&advisor_baseline=…`.
//   TensorBoard recreates the plugin iframe from scratch on reload, so only the page's URL survives
//   a reload; its hash format is `tab&key=value&…` (tf_storage), which keeps unknown keys.
// - the iframe's own hash (`#view=diff&…`), for embeddings whose page the tab cannot reach.
// Pure parse/serialise; app.ts applies them.

import { defaultDiffPair } from "./diffops";

export type View = "report" | "diff" | "doctor" | "trend";

export interface TabState {
  view?: View;
  run?: string;
  host?: string;
  baseline?: string;
  candidate?: string;
  /** The Trend view's series pattern. */
  trend?: string;
}

const VIEWS: readonly View[] = ["report", "diff", "doctor", "trend"];
const KEYS = ["view", "run", "host", "baseline", "candidate", "trend"] as const;

export function parseState(hash: string): TabState {
  const q = new URLSearchParams(hash.replace(/^#/, ""));
  const out: TabState = {};
  const view = q.get("view");
  if (view && (VIEWS as readonly string[]).includes(view)) out.view = view as View;
  for (const k of ["run", "host", "baseline", "candidate", "trend"] as const) {
    const v = q.get(k);
    if (v) out[k] = v;
  }
  return out;
}

export function stateHash(state: TabState): string {
  const q = new URLSearchParams();
  for (const k of KEYS) {
    const v = state[k];
    if (v) q.set(k, v);
  }
  const s = q.toString();
  return s ? `#${s}` : "";
}

const PAGE_PREFIX = "advisor_";

/** Our keys from TensorBoard's page hash (`tab&advisor_view=diff&…`); others are TensorBoard's. */
export function parsePageState(hash: string): TabState {
  const q = new URLSearchParams();
  for (const part of hash.replace(/^#/, "").split("&")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(part.slice(0, eq));
      value = decodeURIComponent(part.slice(eq + 1));
    } catch {
      continue; // a malformed escape in someone else's key
    }
    if (key.startsWith(PAGE_PREFIX)) q.set(key.slice(PAGE_PREFIX.length), value);
  }
  return parseState(q.toString());
}

/** TensorBoard's page hash with our keys replaced by `state`, its own parts kept in order. */
export function pageHashWith(hash: string, state: TabState): string {
  const isOurs = (part: string) => {
    try {
      return decodeURIComponent(part.split("=")[0]).startsWith(PAGE_PREFIX);
    } catch {
      return false;
    }
  };
  const kept = hash.replace(/^#/, "").split("&").filter((p) => p !== "" && !isOurs(p));
  const ours = KEYS.filter((k) => state[k]).map((k) => `${encodeURIComponent(PAGE_PREFIX + k)}=${encodeURIComponent(state[k] as string)}`);
  const all = [...kept, ...ours];
  return all.length ? `#${all.join("&")}` : "";
}

/** The compare pair to pre-select: the URL's pair when both runs exist (and differ), else the
 * newest run (runs come newest first) against the one before it. */
export function initialDiffPair(names: readonly string[], state: TabState): [string, string] {
  const { baseline: b, candidate: c } = state;
  if (b && c && b !== c && names.includes(b) && names.includes(c)) return [b, c];
  return defaultDiffPair(names);
}
