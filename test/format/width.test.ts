import stringWidth from 'string-width';
import { describe, expect, it, vi } from 'vitest';
import { createWriter } from '../../src/format/index.js';
import { displayWidth, loadWidths, truncate, wrapWords } from '../../src/format/width.js';
import { bufferOutput } from '../../src/io/streams.js';
import { WIDTH_CASES } from '../support/width-cases.js';

// Issue 37 item 3: terminal widths from string-width, never cutting inside a grapheme cluster.

/** Each string's grapheme clusters. */
const clusters = (s: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s)].map((g) => g.segment);

describe('displayWidth', () => {
  it('agrees with string-width on every string of the issue (emoji, ZWJ, skin tones, keycaps, flags, CJK, Hangul, Indic, RTL, marks)', async () => {
    await loadWidths();
    const wrong = WIDTH_CASES.filter((s) => displayWidth(s) !== stringWidth(s)).map((s) => `${s}: ${displayWidth(s)} (string-width ${stringWidth(s)})`);
    expect(wrong).toEqual([]);
    expect(WIDTH_CASES.map(displayWidth).slice(0, 7)).toEqual([2, 2, 2, 2, 2, 2, 3]);
  });

  it('needs no library for printable ASCII, and loads it when measured() meets other text', async () => {
    vi.resetModules();
    const fresh = await import('../../src/format/width.js');
    expect(fresh.displayWidth('Blue Note')).toBe(9);
    expect(() => fresh.displayWidth('東京')).toThrow(/before loadWidths/);
    expect(await fresh.measured(() => fresh.displayWidth('東京') + fresh.displayWidth('👍🏽'))).toBe(6);
  });
});

describe('truncate', () => {
  it('never cuts inside a grapheme cluster, and never exceeds the width', async () => {
    await loadWidths();
    const text = `${WIDTH_CASES.join('')}`;
    const whole = new Set(clusters(text));
    for (let width = 1; width <= displayWidth(text) + 1; width++) {
      const cut = truncate(text, width);
      expect(displayWidth(cut), `width ${width}`).toBeLessThanOrEqual(width);
      const kept = cut.endsWith('…') && cut !== text ? cut.slice(0, -1) : cut;
      // what is kept is a prefix made of the text's own clusters, whole
      expect(text.startsWith(kept)).toBe(true);
      for (const g of clusters(kept)) expect(whole.has(g), `width ${width}: ${JSON.stringify(g)}`).toBe(true);
      expect(clusters(kept).join('')).toBe(clusters(text).slice(0, clusters(kept).length).join(''));
    }
  });

  it('keeps a family, a thumbs-up with its skin tone and a Devanagari conjunct whole or drops them whole', async () => {
    await loadWidths();
    expect(truncate('👨‍👩‍👧👨‍👩‍👧', 3)).toBe('👨‍👩‍👧…');
    expect(truncate('👍🏽👍🏽👍🏽', 4)).toBe('👍🏽…');
    expect(truncate('नमस्ते दुनिया', 3)).toBe('नम…');
    expect(truncate('Blue Note Records', 8)).toBe('Blue No…');
  });
});

describe('wrapWords', () => {
  it('counts cells, not characters', async () => {
    await loadWidths();
    expect(wrapWords(['東京', '東京', '東京'], 9)).toEqual(['東京 東京', '東京']);
    expect(wrapWords(['🚀', '🚀', '🚀'], 5)).toEqual(['🚀 🚀', '🚀']);
  });
});

describe('a table of such text', () => {
  it.each([80, 120])('has every line the same display width at %i columns (measured with string-width)', async (columns) => {
    const rows = WIDTH_CASES.map((s, i) => ({ name: `${s} ${'Records '.repeat(i % 12)}${s}`, city: s, code: `C${String(i).padStart(3, '0')}` }));
    const out = bufferOutput({ isTTY: true, columns, color: false });
    const w = await createWriter('table', { out });
    await w.write(rows);
    await w.end();
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toHaveLength(rows.length + 1);
    // the last column ("code", "C000") is 4 cells on every line, so every line has one width
    const widths = lines.map((l) => stringWidth(l));
    expect(new Set(widths).size, lines.join('\n')).toBe(1);
    expect(widths[0]).toBeLessThanOrEqual(columns);
    expect(out.text()).toContain('…');
    // and the city column starts at one cell on every line
    const cityAt = lines.map((l, i) => stringWidth(l.slice(0, l.lastIndexOf(i === 0 ? 'city' : rows[i - 1].city))));
    expect(new Set(cityAt).size, lines.join('\n')).toBe(1);
  });
});
