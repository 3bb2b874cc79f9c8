// The evidence spans of a recommendation or finding: each event that shows it, where it is in the
// trace (its time as the trace writes it, its step, thread, pid and tid) and a way to open it there:
// Perfetto for PyTorch traces (the Profile tab cannot read them), the Profile tab's trace viewer for
// TF/JAX runs. Layout only; the hand-off is perfetto.ts.

import { h } from "../dom";
import { formatElapsed, formatMs, formatTraceTime } from "../format";
import { openInPerfetto, perfettoOrigin, type HandOffState } from "../perfetto";
import type { EvidenceSpan } from "../types";
import { profileTabUrl, traceUrl, traceViewerUrl } from "../urls";

function where(span: EvidenceSpan): string {
  const inStep = span.step === null || span.step === undefined ? null : span.step;
  let step = inStep === null ? "outside the steps" : `step ${inStep}`;
  if (inStep !== null && typeof span.step_offset_ms === "number") step += `, ${formatElapsed(span.step_offset_ms)} into the step`;
  if (typeof span.trace_offset_ms === "number") step += `, ${formatElapsed(span.trace_offset_ms)} into the trace`;
  const ids = span.format === "xspace" ? `plane ${span.pid}, line ${span.tid}` : `pid ${span.pid}, tid ${span.tid}`;
  return `${step} · at ${formatTraceTime(span.ts_us)} · ${formatMs(span.dur_us / 1000)} · ${span.thread} (${ids})`;
}

function fileName(run: string, span: EvidenceSpan): string {
  return `${run.replace(/[^\w.-]+/g, "_")}.${span.host.replace(/[^\w.-]+/g, "_")}.trace`;
}

function perfettoControls(span: EvidenceSpan, run: string): HTMLElement {
  const href = traceUrl(run, span.host);
  const status = h("span", { class: "adv-span-status", testid: "span-status" });
  const download = h("a", { attrs: { href, download: "" }, testid: "span-download" }, "download the trace");
  const say = (state: HandOffState, detail?: string): void => {
    status.dataset.state = state;
    if (state === "opening") status.textContent = " Opening Perfetto…";
    else if (state === "sent") status.textContent = " Opened in Perfetto.";
    else {
      const why = state === "unreachable" ? `Perfetto (${perfettoOrigin()}) could not be reached` : "The trace could not be handed over";
      status.textContent = ` ${why}${detail ? `: ${detail}` : ""}. Download the trace and open it in Perfetto or ` +
        `chrome://tracing; the span is at ts ${formatTraceTime(span.ts_us)}, pid ${span.pid}, tid ${span.tid}.`;
    }
  };
  const button = h(
    "button",
    {
      class: "adv-span-open",
      testid: "span-perfetto",
      attrs: { type: "button" },
      on: { click: () => void openInPerfetto(span, href, `${run} · ${span.name}`, fileName(run, span), say) },
    },
    "Open in Perfetto",
  );
  return h("span", null, button, " · ", download, status);
}

function traceViewerLinks(span: EvidenceSpan, run: string): HTMLElement {
  // the trace viewer at the span's time (a page of its own: the Profile tab keeps no time window),
  // and the Profile tab itself on the span's host
  return h(
    "span",
    null,
    h(
      "a",
      {
        attrs: { href: traceViewerUrl(run, span.host, span.ts_us, span.dur_us), target: "_blank", rel: "noopener" },
        testid: "span-trace-viewer",
      },
      "Open in the trace viewer",
    ),
    " · ",
    h(
      "a",
      { attrs: { href: profileTabUrl(run, "trace_viewer@", span.host), target: "_parent" }, testid: "span-profile-tab" },
      `Profile tab (${span.host}, at ${formatTraceTime(span.ts_us)})`,
    ),
  );
}

/** The spans as a list, or null without spans. `run`: the run the report is of (its name). */
export function spansBlock(spans: EvidenceSpan[] | undefined, run: string, testid = "rec-spans"): HTMLElement | null {
  if (!spans || spans.length === 0) return null;
  // collapsed: the page stays short until a person asks where to look
  return h(
    "details",
    { class: "adv-spans", testid },
    h("summary", { class: "adv-spans-title" }, `Where to look in the trace (${spans.length})`),
    h(
      "ol",
      null,
      spans.map((span) =>
        h(
          "li",
          { testid: "span", attrs: { "data-kind": span.kind, "data-ts": String(span.ts_us), "data-host": span.host } },
          h("code", { class: "adv-span-name", title: span.name }, span.short_name || span.name),
          " ",
          h("span", { class: "adv-span-where" }, where(span)),
          " ",
          span.format === "kineto" ? perfettoControls(span, run) : traceViewerLinks(span, run),
        ),
      ),
    ),
  );
}
