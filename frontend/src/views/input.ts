// The input pipeline card: tf.data, a PyTorch DataLoader or the user's input annotations. Layout
// only; the words, numbers and severities come from inputpipeline.ts.

import { h, table } from "../dom";
import { inputPanelView } from "../inputpipeline";
import type { Report } from "../types";
import type { Severity } from "../verdict";
import { badge, card, list } from "./common";

const BADGE: Record<Severity, string> = { ok: "ok", warn: "check", bad: "slow", neutral: "" };

export function inputPipelineCard(r: Report): HTMLElement | null {
  const view = inputPanelView(r.input_pipeline);
  if (!view) return null;
  const el = card(
    view.title,
    "input-pipeline",
    view.rows.length
      ? h(
          "dl",
          { class: "adv-input-facts", testid: "input-facts" },
          view.rows.map((row) => [
            h("dt", null, row.label),
            h("dd", { testid: row.testid }, row.severity === "neutral" ? row.value : [badge(BADGE[row.severity], row.severity), " ", row.value]),
          ]),
        )
      : null,
    view.tables.map((t) => [t.title ? h("h3", null, t.title) : null, table(t.testid, t.headers, t.rows, t.numericCols)]),
    list(view.notes, "input-notes"),
  );
  el.setAttribute("data-input-kind", view.kind);
  return el;
}
