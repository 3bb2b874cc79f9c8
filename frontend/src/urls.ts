// Every URL the tab requests or links to. All relative: the document's <base> is
// <prefix>/data/plugin/advisor/, so the same bundle works behind --path_prefix, SSH tunnels,
// reverse proxies and notebook iframes. Never build an absolute or host-qualified URL here.

function query(params: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

export const runsUrl = (): string => "runs";
export const doctorUrl = (): string => "doctor";

export function reportUrl(run: string, host?: string | null): string {
  return "report" + query({ run, host });
}

export function diffUrl(baseline: string, candidate: string, baselineHost?: string | null, candidateHost?: string | null): string {
  return "diff" + query({ baseline, candidate, baseline_host: baselineHost, candidate_host: candidateHost });
}

/** The captures `pattern` names as one series (a run directory, a path prefix or a glob), in
 * capture-time order unless `order` is "given"; answers 202 with progress while they are analysed. */
export function trendUrl(pattern: string, order?: "time" | "given" | null): string {
  return "trend" + query({ run: pattern, order });
}

/** From <prefix>/data/plugin/advisor/ back to TensorBoard's own page <prefix>/. */
export const TENSORBOARD_ROOT = "../../../";

export interface ProfileTool {
  tag: string;
  label: string;
}

/**
 * The built-in Profile tab (xprof) reads run, tag (its tool) and host from the query string of
 * TensorBoard's page and is selected by the #profile hash. xprof lists the streaming trace
 * viewer as "trace_viewer@" for XSpace runs and "trace_viewer" for old JSON traces.
 */
export function profileTools(format: string | undefined): ProfileTool[] {
  if (format === "kineto") return []; // xprof cannot open PyTorch traces: no link that would fail there
  return [
    { tag: "overview_page", label: "Overview page" },
    { tag: "input_pipeline_analyzer", label: "Input pipeline analyzer" },
    { tag: format === "legacy" ? "trace_viewer" : "trace_viewer@", label: "Trace viewer" },
  ];
}

export function profileTabUrl(run: string, tool: string, host?: string | null): string {
  return TENSORBOARD_ROOT + query({ run, tag: tool, host }) + "#profile";
}

/** The framework badge of a run in the run list and the report: from the runs route's keys. */
export function frameworkLabel(run: { framework?: string; format?: string } | undefined): string {
  const framework = run?.framework || (run?.format === "kineto" ? "pytorch" : "");
  if (framework === "pytorch") return "PyTorch";
  if (framework === "tensorflow") return "TensorFlow";
  return "TF/JAX";
}

/** The discovered profile file of a run and host as it is on disk (gzip kept): the `trace` route. */
export function traceUrl(run: string, host?: string | null): string {
  return "trace" + query({ run, host });
}

/** Milliseconds as xprof's trace viewer reads them from a URL: up to the ns, no exponent. */
function ms(x: number): string {
  return String(Math.max(0, Math.round(x * 1e6)) / 1e6);
}

/** From <prefix>/data/plugin/advisor/ to the Profile plugin's own pages, <prefix>/data/plugin/profile/. */
export const PROFILE_PLUGIN = "../profile/";

/**
 * xprof's trace viewer page on `host`, opened on the window around a span (times in µs on the
 * profile's base, the trace viewer's own). Inside TensorBoard the Profile tab keeps only run, tag and
 * host of the page's query (it rewrites the URL), so the window cannot go through the tab; its trace
 * viewer page reads `view_start`/`view_end` (ms on the same base as the trace's `ts`) for its first
 * viewport and asks xprof's data route for that window, and `trace_data_url`, which it reads as a
 * path on its own origin: made here from the document's base, so --path_prefix is kept.
 */
export function traceViewerUrl(run: string, host: string, tsUs: number, durUs: number, base: string = document.baseURI): string {
  const pad = Math.max(durUs, 1000); // the span and as much again either side, at least 1 ms
  const data = new URL(PROFILE_PLUGIN + "data", base).pathname + query({ run, tag: "trace_viewer@", host, hosts: host });
  return PROFILE_PLUGIN + "trace_viewer_index.html" + query({
    is_streaming: "true",
    is_oss: "true",
    trace_data_url: data,
    view_start: ms((tsUs - pad) / 1000),
    view_end: ms((tsUs + durUs + pad) / 1000),
  });
}
