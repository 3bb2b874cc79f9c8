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
