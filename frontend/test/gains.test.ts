import { describe, expect, it } from "vitest";
import cases from "./gain_cases.json";
import { gainText } from "../src/verdict";
import type { ExpectedGain } from "../src/types";

// The same cases are checked against the exports' wording in tests/advice/test_gains.py.
describe("gainText", () => {
  it.each(cases)("writes $text", ({ gain, text }) => {
    expect(gainText(gain as ExpectedGain)).toBe(text);
  });
  it("says why when there is no gain at all", () => {
    expect(gainText(undefined)).toBe("Not estimated: no estimate for this finding");
  });
});
