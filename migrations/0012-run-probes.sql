
do $$
declare
  s text := current_schema();
  runs text := format('%I.%I', 'catalog_import_runs', current_schema());
  lock_key text := 'catalog writes ' || current_schema();
begin
  execute format($f$create or replace function %I.catalog_import_run_check(fingerprint text) returns jsonb language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $b$
declare r record; probe boolean := strpos(catalog_import_run_check.fingerprint, '.') = 0;
begin
  if probe then
    select x.fingerprint, x.generation, x.records, x.finished into r from %s x
      where left(x.fingerprint, length(catalog_import_run_check.fingerprint) + 1) = catalog_import_run_check.fingerprint || '.'
        and x.generation = %I.catalog_writes_now()
      order by x.finished desc limit 1;
  else
    select x.fingerprint, x.generation, x.records, x.finished into r from %s x where x.fingerprint = catalog_import_run_check.fingerprint;
  end if;
  if found and r.generation = %I.catalog_writes_now() then
    return jsonb_build_object('fresh', true, 'records', r.records, 'finished', r.finished, 'fingerprint', r.fingerprint);
  end if;
  if pg_try_advisory_xact_lock(hashtext(%L)) then
    return jsonb_build_object('fresh', false, 'generation', %I.catalog_writes_now());
  end if;
  return jsonb_build_object('fresh', false, 'generation', null);
end $b$ $f$, s, runs, s, runs, s, lock_key, s);
  execute format('revoke execute on function %I.catalog_import_run_check(text) from public', s);
end $$;
