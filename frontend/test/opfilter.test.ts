import { describe, expect, it } from "vitest";
import { categoryLabel } from "../src/categories";
import { filterOps, pctOfStep } from "../src/opfilter";

const OPS = [
  { name: "model/conv2d/Conv2D:Conv2D", category: "host_compute", time_ms: 5 },
  { name: "DecodePng:DecodePng", category: "input_pipeline", time_ms: 20 },
  { name: "model/dense/MatMul:MatMul", category: "host_compute", time_ms: 10 },
  { name: "Adam/Sqrt:Sqrt", category: "host_compute", time_ms: 1 },
];

describe("op tables", () => {
  it("filters by name words, case-insensitively, largest first", () => {
    const v = filterOps(OPS, "  MODEL ", 0);
    expect(v.rows.map((o) => o.time_ms)).toEqual([10, 5]);
    expect([v.matching, v.total]).toEqual([2, 4]);
    expect(filterOps(OPS, "model matmul", 0).rows.map((o) => o.name)).toEqual(["model/dense/MatMul:MatMul"]);
  });
  it("finds an op by the oneDNN name TensorFlow ran it as", () => {
    const ops = [...OPS, { name: "model/d/MatMul:MatMul", onednn_op: "_MklMatMul", category: "host_compute", time_ms: 2 }];
    expect(filterOps(ops, "_mklmatmul", 0).rows.map((o) => o.name)).toEqual(["model/d/MatMul:MatMul"]);
  });
  it("filters by the category's label as shown", () => {
    expect(filterOps(OPS, "input pipeline", 0).rows.map((o) => o.name)).toEqual(["DecodePng:DecodePng"]);
  });
  it("cuts to the top N after filtering; 0 keeps all", () => {
    const v = filterOps(OPS, "", 2);
    expect(v.rows.map((o) => o.time_ms)).toEqual([20, 10]);
    expect(v.matching).toBe(4);
    expect(filterOps(OPS, "", 0).rows).toHaveLength(4);
  });
  it("computes % of step from the mean step, and nothing without one", () => {
    expect(pctOfStep(25, 100)).toBeCloseTo(25, 9);
    expect(pctOfStep(25, 0)).toBeNull();
    expect(pctOfStep(undefined, 100)).toBeNull();
  });
  it("labels op categories in words, never ids", () => {
    expect(categoryLabel("input_pipeline")).toBe("Input pipeline");
    expect(categoryLabel("host_compute")).toBe("Host compute");
  });
});
