import { describe, expect, it } from "vitest";
import { initialDiffPair, pageHashWith, parsePageState, parseState, stateHash } from "../src/urlstate";

describe("URL state", () => {
  it("round-trips every field, including names with slashes, spaces and markup", () => {
    const state = { view: "diff" as const, run: "run1_naive/train/2026_11_22", host: "vm 1", baseline: "<b>a&b</b>", candidate: "c#d" };
    expect(parseState(stateHash(state))).toEqual(state);
  });
  it("ignores unknown views and empty values", () => {
    expect(parseState("#view=evil&run=&host=h")).toEqual({ host: "h" });
    expect(stateHash({})).toBe("");
  });
  it("lives beside TensorBoard's own keys in its page hash and survives a round trip", () => {
    const state = { view: "diff" as const, baseline: "run1_naive/train/s&1", candidate: "a=b c" };
    const hash = pageHashWith("#advisor&darkMode=true&advisor_view=report", state);
    expect(hash.startsWith("#advisor&darkMode=true&advisor_view=diff&")).toBe(true);
    // TensorBoard's parser: split on & then =, decodeURIComponent each side; no part may break it.
    for (const part of hash.slice(1).split("&")) expect(part.split("=").length).toBeLessThanOrEqual(2);
    expect(parsePageState(hash)).toEqual(state);
    expect(pageHashWith(hash, {})).toBe("#advisor&darkMode=true");
    expect(parsePageState("#advisor&%E0%A4%A=1&advisor_run=r")).toEqual({ run: "r" });
  });
  it("pre-selects the URL's pair, else the newest against the one before", () => {
    const names = ["run4", "run3", "run2", "run1"];
    expect(initialDiffPair(names, {})).toEqual(["run3", "run4"]);
    expect(initialDiffPair(names, { baseline: "run1", candidate: "run2" })).toEqual(["run1", "run2"]);
    expect(initialDiffPair(names, { baseline: "gone", candidate: "run2" })).toEqual(["run3", "run4"]);
    expect(initialDiffPair(names, { baseline: "run2", candidate: "run2" })).toEqual(["run3", "run4"]);
    expect(initialDiffPair(["only"], {})).toEqual(["only", "only"]);
  });
});
