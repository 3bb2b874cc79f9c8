import { describe, expect, it } from "vitest";
import { collectivesLine } from "../src/views/collectives";

describe("collectives summary line", () => {
  it("names the time per step, the exposed part and the hidden share with the tab's rounding", () => {
    expect(collectivesLine({ per_step_ms: 8, exposed_per_step_ms: 4, exposed_step_pct: 20.0001, hidden_pct: 50 })).toBe(
      "8 ms of collectives per step, 4 ms of it exposed (20 % of the step); 50 % hidden behind compute",
    );
    expect(collectivesLine({ per_step_ms: 0.25 })).toBe("0.25 ms of collectives per step");
    expect(collectivesLine({})).toBe("");
  });
});
