import { describe, expect, it } from "vitest";
import type { Doctor } from "../src/types";
import { stepMarkerLabel } from "../src/verdict";
import { doctorHeadline, doctorProblemCount, sessionSeverity, sharedFixes } from "../src/views/doctor";

const FIX = "tb-advisor fix-logdir /logs";

// The demo's shape: every session readable, two with tips for TensorBoard's own Profile tab.
const demo: Doctor = {
  ok: false,
  sessions: [
    { run: "run1", problems: [], severity: "ok" },
    { run: "run3", problems: ["Keras 3 markers only"], fixes: ["class StepMarker"], severity: "tip" },
    { run: "run4", problems: ["no events file"], fixes: [FIX], severity: "tip" },
  ],
};

describe("doctor", () => {
  it("stays calm when only TensorBoard's Profile tab is affected", () => {
    expect(doctorProblemCount(demo)).toBe(0);
    const head = doctorHeadline(demo);
    expect(head.severity).toBe("ok");
    expect(head.text).toBe("The Advisor reads all 3 profile sessions; 2 tips for TensorBoard's built-in Profile tab");
  });
  it("counts real problems, and treats a server without severities as all problems", () => {
    const bad: Doctor = { sessions: [...demo.sessions!, { run: "x", problems: ["corrupt", "empty"], severity: "problem" }] };
    expect(doctorProblemCount(bad)).toBe(2);
    expect(doctorHeadline(bad)).toEqual({ text: "2 problems in 4 profile sessions", severity: "warn" });
    expect(sessionSeverity({ problems: ["p"] })).toBe("problem");
    expect(sessionSeverity({ problems: [] })).toBe("ok");
  });
  it("says a fix shared by several sessions once, with the runs it fixes", () => {
    const sessions = [
      { run: "a", fixes: [FIX] },
      { run: "b", fixes: [FIX, "other"] },
      { run: "c", fix: FIX },
    ];
    expect(sharedFixes(sessions)).toEqual([{ fix: FIX, runs: ["a", "b", "c"] }]);
  });
  it("names step markers in words, not internal ids", () => {
    for (const id of ["root_marker", "keras3_marker", "legacy_marker", "none", "profiler_step"]) {
      expect(stepMarkerLabel(id)).not.toMatch(/_marker|_step$/);
    }
  });
});
