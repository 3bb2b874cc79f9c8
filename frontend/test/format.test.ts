import { describe, expect, it } from "vitest";
import { formatBytes, formatDeltaMs, formatDeltaPct, formatElapsed, formatMs, formatNumber, formatPct } from "../src/format";

describe("formatNumber", () => {
  it("keeps about three significant digits and groups thousands", () => {
    expect(formatNumber(0.04213)).toBe("0.042");
    expect(formatNumber(4.256)).toBe("4.26");
    expect(formatNumber(42.25)).toBe("42.3"); // toFixed rounds an exact half up
    expect(formatNumber(123.6)).toBe("124");
    expect(formatNumber(1234567)).toBe("1,234,567");
    expect(formatNumber(-1234.4)).toBe("-1,234");
  });
  it("drops trailing zeros and a negative zero", () => {
    expect(formatNumber(2.5)).toBe("2.5");
    expect(formatNumber(10)).toBe("10");
    expect(formatNumber(0)).toBe("0");
    expect(formatNumber(-0.0001)).toBe("0");
  });
  it("shows a dash for missing or non-finite values", () => {
    expect(formatNumber(undefined)).toBe("–");
    expect(formatNumber(null)).toBe("–");
    expect(formatNumber(NaN)).toBe("–");
    expect(formatNumber(Infinity)).toBe("–");
  });
});

describe("formatPct / formatMs", () => {
  it("writes percents with a space and one decimal below 10", () => {
    expect(formatPct(41.2)).toBe("41 %");
    expect(formatPct(4.2)).toBe("4.2 %");
    expect(formatPct(0.04)).toBe("0 %");
  });
  it("has no decimal at and above 10 and for whole small numbers", () => {
    expect(formatPct(99.6)).toBe("100 %");
    expect(formatPct(10)).toBe("10 %");
    expect(formatPct(3)).toBe("3 %");
    expect(formatPct(0)).toBe("0 %");
  });
  it("formats milliseconds", () => {
    expect(formatMs(200.4)).toBe("200 ms");
    expect(formatMs(undefined)).toBe("–");
  });
  it("signs deltas", () => {
    expect(formatDeltaMs(12.34)).toBe("+12.3 ms");
    expect(formatDeltaMs(-0.5)).toBe("-0.5 ms");
    expect(formatDeltaMs(0)).toBe("0 ms");
    expect(formatDeltaPct(-22.4)).toBe("-22 %");
  });
});

describe("formatBytes", () => {
  it("uses binary units", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(3 * 1024 ** 3)).toBe("3 GiB");
    expect(formatBytes(-1)).toBe("–");
  });
});

import cases from "./format_cases.json";

describe("the shared rounding table (the Python exports use the same cases)", () => {
  it.each(cases.pct as [number, string][])("formatPct(%s) is %s", (x, text) => {
    expect(formatPct(x)).toBe(text);
  });
  it.each(cases.number as [number, string][])("formatNumber(%s) is %s", (x, text) => {
    expect(formatNumber(x)).toBe(text);
  });
  it.each(cases.elapsed as [number, string][])("formatElapsed(%s) is %s", (x, text) => {
    expect(formatElapsed(x)).toBe(text);
  });
});
