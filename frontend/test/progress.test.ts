import { describe, expect, it } from "vitest";
import { progressFraction, progressLine, progressParts } from "../src/progress";

describe("analysis progress", () => {
  it("words the stage, bytes and time", () => {
    const p = { stage: "reading", done_bytes: 1024 * 1024, total_bytes: 4 * 1024 * 1024, elapsed_s: 2.46 };
    expect(progressLine(p)).toBe("reading the profile · 1 MiB of 4 MiB · 2.5 s");
    expect(progressFraction(p)).toBeCloseTo(0.25, 9);
    expect(progressFraction({ stage: "queued", done_bytes: 0, total_bytes: 0 })).toBeNull();
    expect(progressLine(undefined)).toBeNull();
  });
  it("finds one progress in a report's 202 and two in a diff's", () => {
    expect(progressParts({ status: "running", progress: { stage: "queued" } })).toEqual([{ label: "", progress: { stage: "queued" } }]);
    const both = progressParts({ progress: { baseline: { stage: "analysing" }, candidate: { stage: "reading" } } });
    expect(both.map((x) => x.label)).toEqual(["Baseline", "Candidate"]);
    expect(progressParts({ status: "running" })).toEqual([]);
    expect(progressParts(null)).toEqual([]);
  });
});
