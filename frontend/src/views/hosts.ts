// The per-host card of a multi-host report: step time, input wait and device use per host, with
// stragglers (hosts that stand out from the median host, per the server's thresholds) marked and
// explained. Kept apart from report.ts so other views can reuse it.

import { h, table } from "../dom";
import { formatMs, formatPct } from "../format";
import type { HostSummary, Report } from "../types";
import { hasAccelerator, verdictView } from "../verdict";
import { badge, card, list } from "./common";

/** Mean steady step of a host: the new `step_time_ms`, or the steps summary of older reports. */
export function hostStepMs(ph: HostSummary): number | undefined {
  return ph.step_time_ms ?? ph.steps?.mean_ms ?? ph.steps?.median_ms;
}

export function perHostCard(r: Report): HTMLElement | null {
  const hosts = r.per_host ?? [];
  if (hosts.length < 2) return null;
  const accelerator = hasAccelerator(r);
  const rows = hosts.map((ph) => {
    const v = verdictView(ph.verdict, { breakdownPct: ph.breakdown_pct, accelerator });
    return [
      h("span", { attrs: { "data-host": ph.host } }, ph.host),
      badge(v.short, v.severity),
      formatMs(hostStepMs(ph)),
      formatPct(ph.input_pct ?? ph.breakdown_pct?.input),
      typeof ph.device_util_pct === "number" ? formatPct(ph.device_util_pct) : "–",
      ph.straggler ? badge("straggler", "bad", "straggler-badge") : "",
    ];
  });
  const stragglers = (r.stragglers ?? []).map((s) => s.message);
  return card(
    "Per host",
    "per-host",
    table("per-host-table", ["Host", "Verdict", "Step", "Input", "Device busy", ""], rows, [2, 3, 4]),
    stragglers.length
      ? h("p", { class: "adv-muted" }, "Stragglers (compared with the median host; every host waits for the slowest):")
      : null,
    list(stragglers, "stragglers"),
  );
}
