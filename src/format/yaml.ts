import type { PageWriter, WriterOptions } from './types.js';

// aliasDuplicateObjects: rows never share objects, and looking for them costs time per page
const STRINGIFY = { lineWidth: 0, minContentWidth: 0, aliasDuplicateObjects: false } as const;

/** YAML: a sequence streamed a page at a time (or one mapping with `single`). Loads `yaml` (≈70 ms) on the first page, not before. */
export function yamlWriter(opts: WriterOptions): PageWriter {
  let count = 0;
  return {
    async write(rows) {
      if (!rows.length) return;
      const { stringify } = await import('yaml');
      for (const text of opts.single ? rows.map((r) => stringify(r, STRINGIFY)) : [stringify(rows, STRINGIFY)]) await opts.out.write(text);
      count += rows.length;
    },
    async end() {
      if (count === 0) await opts.out.write(opts.single ? '{}\n' : '[]\n');
    },
  };
}
