import { describe, expect, it } from "vitest";
import data from "./short_name_cases.json";
import { shownName } from "../src/views/optable";

// The same cases hold the Python short names and the exports (tests/analysis/classify/test_short_names.py):
// the tab's name cells (nameCell) show this text, the full name on hover; the browser test checks the cells.
describe("the tab's short names", () => {
  it.each(data.cases)("shows $short", ({ name, short }) => {
    expect(shownName({ name, short_name: short })).toBe(short);
  });
  it("shows the full name where an old report has no short name", () => {
    expect(shownName({ name: "aten::conv2d" })).toBe("aten::conv2d");
  });
});
