
create sequence if not exists catalog_writes;
comment on sequence catalog_writes is 'Counts the statements that wrote any collection or its source ids (a statement trigger on each): equal values, nothing written in between.';
revoke all on sequence catalog_writes from public;

do $$
declare
  s text := current_schema();
  runs text := format('%I.%I', 'catalog_import_runs', current_schema());
  tally text := format('%I.%I', 'catalog_run_writes', current_schema());
  lock_key text := 'catalog writes ' || current_schema();
  counter text := format('%I.catalog_writes', current_schema());
  c text;
begin
  begin
    create type catalog_import_run as (fingerprint text, generation bigint, records bigint, finished timestamp with time zone);
  exception when duplicate_object then null;
  end;
  begin
    create type catalog_run_write as (run uuid, at timestamp with time zone);
  exception when duplicate_object then null;
  end;
  perform pg_advisory_xact_lock(hashtext('catalog_create_schema'));
  begin
    create schema if not exists catalog_import_runs;
  exception when duplicate_schema or unique_violation then null;
  end;
  begin
    create schema if not exists catalog_run_writes;
  exception when duplicate_schema or unique_violation then null;
  end;
  revoke all on schema catalog_import_runs from public;
  revoke all on schema catalog_run_writes from public;
  execute format('create table if not exists %s of %I.catalog_import_run (fingerprint primary key, generation not null, records not null, finished not null default now())', runs, s);
  execute format('revoke all on %s from public', runs);
  execute format('comment on table %s is %L', runs, 'Imports that left the catalog in schema ' || s || ' as their file says (issue 35): the fingerprint of file and settings, and the write count after the run. Not a collection.');
  execute format('create unlogged table if not exists %s of %I.catalog_run_write (run not null, at not null default now())', tally, s);
  execute format('create index if not exists %I on %s (run)', s || '_run_idx', tally);
  execute format('revoke all on %s from public', tally);
  execute format('comment on table %s is %L', tally, 'One row per statement an import run wrote to the catalog in schema ' || s || ' (Prefer: run=), until the run is recorded. Not a collection.');

  execute format($f$create or replace function %I.catalog_note_write() returns trigger language plpgsql security definer set search_path = pg_catalog, pg_temp as $b$
declare run text := current_setting('catalog.run', true);
begin
  perform pg_advisory_xact_lock_shared(hashtext(%L));
  perform nextval(%L);
  if run ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    insert into %s (run) values (run::uuid);
  end if;
  return null;
end $b$ $f$, s, lock_key, counter, tally);

  execute format($f$create or replace function %I.catalog_writes_now() returns bigint language sql stable security definer set search_path = pg_catalog, pg_temp as $b$
  select case when is_called then last_value else 0 end from %s
$b$ $f$, s, counter);

  execute format($f$create or replace function %I.catalog_import_run_check(fingerprint text) returns jsonb language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $b$
declare r record;
begin
  select x.generation, x.records, x.finished into r from %s x where x.fingerprint = catalog_import_run_check.fingerprint;
  if found and r.generation = %I.catalog_writes_now() then
    return jsonb_build_object('fresh', true, 'records', r.records, 'finished', r.finished);
  end if;
  if pg_try_advisory_xact_lock(hashtext(%L)) then
    return jsonb_build_object('fresh', false, 'generation', %I.catalog_writes_now());
  end if;
  return jsonb_build_object('fresh', false, 'generation', null);
end $b$ $f$, s, runs, s, lock_key, s);

  execute format($f$create or replace function %I.catalog_import_run_record(fingerprint text, run uuid, started bigint, records bigint) returns boolean language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $b$
#variable_conflict use_column
declare own bigint; now_at bigint; kept boolean := false;
begin
  select count(*) into own from %s w where w.run = catalog_import_run_record.run;
  delete from %s w where w.run = catalog_import_run_record.run or w.at < now() - interval '7 days';
  if started is not null and pg_try_advisory_xact_lock(hashtext(%L)) then
    now_at := %I.catalog_writes_now();
    if now_at = started + own then
      insert into %s as x (fingerprint, generation, records, finished)
        values (catalog_import_run_record.fingerprint, now_at, catalog_import_run_record.records, now())
        on conflict (fingerprint) do update set generation = excluded.generation, records = excluded.records, finished = excluded.finished;
      kept := true;
    end if;
  end if;
  delete from %s x where x.finished < now() - interval '90 days';
  return kept;
end $b$ $f$, s, tally, tally, lock_key, s, runs, runs);

  execute format('revoke execute on function %I.catalog_writes_now() from public', s);
  execute format('revoke execute on function %I.catalog_import_run_check(text) from public', s);
  execute format('revoke execute on function %I.catalog_import_run_record(text, uuid, bigint, bigint) from public', s);

  foreach c in array array['countries', 'languages', 'genres', 'subgenres', 'labels', 'artists', 'releases', 'tracks'] loop
    execute format('drop trigger if exists %I on %I.%I', c || '_note_writes', s, c);
    execute format('create trigger %I after insert or update or delete or truncate on %I.%I for each statement execute function %I.catalog_note_write()', c || '_note_writes', s, c, s);
    execute format('alter table %I.%I enable always trigger %I', s, c, c || '_note_writes');
  end loop;
  execute format('drop trigger if exists %I on %I.%I', 'note_writes', 'catalog_source_ids', s);
  execute format('create trigger %I after insert or update or delete or truncate on %I.%I for each statement execute function %I.catalog_note_write()', 'note_writes', 'catalog_source_ids', s, s);
  execute format('alter table %I.%I enable always trigger %I', 'catalog_source_ids', s, 'note_writes');
end $$;
