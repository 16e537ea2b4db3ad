import { describe, expect, it } from 'vitest';
import { bufferPool, holderEngine, useSmallBufferPool, v8FlagsChanged } from '../../src/store/pglite-engine.js';

describe("PGlite's engine in this process (src/store/pglite-engine.ts)", () => {
  it('the buffer pool: PGlite\'s default, or 16 MB for short commands', () => {
    expect(bufferPool()).toBeNull();
    useSmallBufferPool(true);
    expect(bufferPool()).toBe('16MB');
    useSmallBufferPool(false);
    expect(bufferPool()).toBeNull();
  });

  it("a background holder's engine: the small pool, and a V8 flag changed (no code cache is written after it)", () => {
    expect(v8FlagsChanged()).toBe(false);
    holderEngine();
    expect(v8FlagsChanged()).toBe(true);
    expect(bufferPool()).toBe('16MB');
    useSmallBufferPool(false);
  });
});
