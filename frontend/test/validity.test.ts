import { describe, expect, it } from "vitest";
import type { Validity } from "../src/types";
import { validityView, withheldReason } from "../src/validity";

const row = (analysis: string, status: string, reason = "") => ({ analysis, status, reason, fix: "", rules: [] });

describe("validity", () => {
  it("is collapsed and not first when the trace supports everything", () => {
    const v: Validity = { rows: [row("steps", "supported"), row("memory", "supported")] };
    const view = validityView(v)!;
    expect(view.open).toBe(false);
    expect(view.first).toBe(false);
    expect(view.limited).toEqual([]);
    expect(view.summary).toBe("Every one of the 2 analyses");
  });
  it("opens on a caveat, and comes first only when the verdict's own analyses are unsupported", () => {
    const caveat = validityView({ rows: [row("steps", "degraded", "few"), row("memory", "unsupported", "no records")] })!;
    expect(caveat.open).toBe(true);
    expect(caveat.first).toBe(false);
    expect(caveat.limited.map((r) => r.analysis)).toEqual(["memory", "steps"]);
    expect(caveat.summary).toBe("1 unsupported, 1 with a caveat of 2 analyses");
    const noSteps = validityView({ rows: [row("steps", "unsupported", "no markers")] })!;
    expect(noSteps.first).toBe(true);
  });
  it("says why a number is withheld only where its analysis is unsupported", () => {
    const v: Validity = { rows: [row("roofline", "unsupported", "no shapes"), row("steps", "degraded", "few")] };
    expect(withheldReason(v, "roofline")).toBe("no shapes");
    expect(withheldReason(v, "steps")).toBe("");
    expect(withheldReason(undefined, "roofline")).toBe("");
  });
  it("has no card for a report from before the matrix", () => {
    expect(validityView(undefined)).toBeNull();
    expect(validityView({ rows: [] })).toBeNull();
  });
});
