// The "What this trace supports" card: collapsed when the trace supports every analysis, open
// (and placed first by report.ts) when it does not.

import { h, table } from "../dom";
import type { Report } from "../types";
import { analysisLabel, validityView, withheldReason, type ValidityView } from "../validity";
import { badge, card, note } from "./common";

function statusBadge(status: string): HTMLElement {
  const el = badge(status, status === "unsupported" ? "bad" : status === "degraded" ? "warn" : "ok");
  el.style.whiteSpace = "nowrap"; // one word: never broken inside the narrow column
  return el;
}

export function validityCard(r: Report, view: ValidityView | null = validityView(r.validity)): HTMLElement | null {
  if (view === null) return null;
  const rows = view.limited.length ? view.limited : view.rows;
  const details = h(
    "details",
    { class: "adv-card", testid: "validity-card", attrs: { "data-first": String(view.first) } },
    h("summary", { testid: "validity-summary" }, h("strong", null, "What this trace supports"), ` — ${view.summary}`),
    table(
      "validity-table",
      ["Analysis", "Status", "Why", "Fix"],
      rows.map((row) => [
        analysisLabel(row.analysis),
        statusBadge(row.status),
        row.reason ?? "",
        row.fix ? h("code", null, row.fix) : "",
      ]),
      [],
    ),
  );
  (details as HTMLDetailsElement).open = view.open;
  return details;
}

/** Where a view's numbers are withheld because the trace cannot support them: the card keeps its
 * place, the number reads "—", and hovering it says why (the matrix's reason). */
export function withheldCard(r: Report, analysis: string, title: string, figure: string): HTMLElement | null {
  const reason = withheldReason(r.validity, analysis);
  if (!reason) return null;
  return card(
    title,
    `withheld-${analysis}`,
    h("p", null, `${figure} `, h("span", { testid: `withheld-${analysis}-value`, attrs: { title: reason } }, "—")),
    note(reason),
  );
}
