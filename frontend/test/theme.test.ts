import { describe, expect, it } from "vitest";
import { readParentDark, resolveTheme } from "../src/theme";

describe("resolveTheme", () => {
  it("follows TensorBoard's body.dark-mode when the parent is readable", () => {
    expect(resolveTheme(true, false)).toBe("dark");
    expect(resolveTheme(false, true)).toBe("light"); // TB set to light overrides a dark OS
  });
  it("falls back to prefers-color-scheme", () => {
    expect(resolveTheme(null, true)).toBe("dark");
    expect(resolveTheme(null, false)).toBe("light");
  });
});

describe("readParentDark", () => {
  const body = (dark: boolean) => ({ classList: { contains: (c: string) => dark && c === "dark-mode" } });
  it("reads the class of the parent's body", () => {
    const self = {} as Window;
    const parent = { document: { body: body(true) } };
    expect(readParentDark({ parent } as unknown as Window)).toBe(true);
    expect(readParentDark({ parent: { document: { body: body(false) } } } as unknown as Window)).toBe(false);
    (self as unknown as { parent: Window }).parent = self;
    expect(readParentDark(self)).toBeNull();
  });
  it("returns null for a cross-origin parent", () => {
    const parent = {
      get document(): Document {
        throw new DOMException("Blocked a frame", "SecurityError");
      },
    };
    expect(readParentDark({ parent } as unknown as Window)).toBeNull();
  });
});
