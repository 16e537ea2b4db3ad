import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import type { WriteRecord } from '../flags/body.js';

/**
 * `add`/`update` with text references (issue 26): a release given `label='Blue Note'` and no
 * `label_id` gets the id of the label with that name, matched as an import matches names
 * (src/import/match/names.ts); `--ref FIELD=COLLECTION.COLUMN` names other references. A name no
 * record has is refused with the closest one; nothing is sent then. A `--dry-run` (nothing sent,
 * reads included) leaves the names as they are.
 */
export async function resolveReferences(records: WriteRecord[], collection: string, refTexts: readonly string[], ctx: Context): Promise<void> {
  if (ctx.dryRun) return;
  const schema = await ctx.schema();
  const table = schema.tables.get(collection);
  if (!table) return;
  const [{ NameResolver, parseRef, tableReferences }, { contextTransport }, { ImportError }] = await Promise.all([
    import('../../import/match/names.js'),
    import('../transport.js'),
    import('../../import/types.js'),
  ]);
  let extra;
  try {
    extra = refTexts.map((r) => parseRef(table, r, [...schema.tables.values()]));
  } catch (err) {
    if (err instanceof ImportError) throw new UsageError(err.message);
    throw err;
  }
  const refs = tableReferences(table, extra);
  for (const ref of refs) {
    const wanted = records.filter((r) => typeof r[ref.field] === 'string' && (r[ref.field] as string).trim() !== '' && !(ref.idField in r));
    if (wanted.length === 0) continue;
    const resolver = await NameResolver.open(await contextTransport(ctx), ref, false);
    for (const r of wanted) {
      const got = resolver.resolve(r[ref.field] as string, typeof r.genre === 'string' ? r.genre : null);
      if (got && 'id' in got) r[ref.idField] = got.id;
      else if (got) throw new UsageError(got.message.replace(' (--create-missing adds it)', ''), `add it first (catalog ${ref.collection} add ${ref.column}='…'), or give ${ref.idField}=<id>`);
    }
  }
}
