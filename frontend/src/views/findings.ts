// The findings of a deeper-view panel (kernels, memory, collectives, roofline) as recommendation cards:
// severity badge, title, message, evidence and a snippet to try. Layout only.

import type { Finding } from "../deep/types";
import { h } from "../dom";
import { badge, list, snippet } from "./common";
import { spansBlock } from "./spans";

/** Findings a panel shows open; the rest wait, collapsed, behind "N more findings". */
export const FINDINGS_SHOWN = 1;

/** `run`: the report's run, for the links of the findings' evidence spans. The first FINDINGS_SHOWN
 * open, the others in a collapsed block a person opens: a panel with many findings stays short. */
export function findingCards(findings: Finding[] | undefined, testid: string, run?: string): HTMLElement[] {
  const cards = (findings ?? []).map((f) => findingCard(f, testid, run));
  if (cards.length <= FINDINGS_SHOWN) return cards;
  const rest = cards.length - FINDINGS_SHOWN;
  return [
    ...cards.slice(0, FINDINGS_SHOWN),
    h("details", { class: "adv-more-findings", testid: `${testid}-more` }, h("summary", null, `${rest} more finding${rest === 1 ? "" : "s"}`), cards.slice(FINDINGS_SHOWN)),
  ];
}

function findingCard(f: Finding, testid: string, run?: string): HTMLElement {
  return (
    h(
      "article",
      { class: `adv-rec sev-${f.severity === "high" ? "bad" : f.severity === "medium" ? "warn" : "neutral"}`, testid, attrs: { "data-finding-id": f.id } },
      h("header", null, badge(f.severity ?? "low", f.severity === "high" ? "bad" : f.severity === "medium" ? "warn" : "neutral"), h("h3", null, f.title ?? f.id), h("code", { class: "adv-rec-id" }, f.id)),
      f.message ? h("p", { class: "adv-rec-message" }, f.message) : null,
      f.evidence ? list([f.host ? `${f.host}: ${f.evidence}` : f.evidence]) : null,
      run ? spansBlock(f.evidence_spans, run, "finding-spans") : null,
      f.snippet ? snippet("What to try", f.snippet, "finding-snippet") : null,
    )
  );
}
