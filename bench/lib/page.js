/**
 * The "typical 50-row page" of the throughput scenario: the path the service is asked for and
 * the SQL the minimal handler runs for it (the page's JSON built inside the database, as
 * PostgREST does).
 */
export const PAGE_PATH = '/tracks?order=created.desc&limit=50';
export const PAGE_SQL = `select coalesce(json_agg(_t), '[]')::text as body
from (select * from tracks order by created desc limit 50) _t`;
