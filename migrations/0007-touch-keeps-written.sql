
create or replace function catalog_touch_updated() returns trigger language plpgsql as $$
begin
  if new.updated is not distinct from old.updated then
    new.updated := now();
  end if;
  return new;
end $$;
