-- The search bench's data (bench/search.ts): :members members in one community, each with
-- a value for two additional fields, plus a neighbour community holding look-alike members.
-- Set-based (generate_series), one statement per table; event capture is off while it runs
-- (these rows are not changes any subscriber should see).
alter table members disable trigger user;
alter table member_field_values disable trigger user;
insert into communities (id, name, created_at) values
  ('00000000-0000-4000-8000-0000000000a1', 'search bench', now()),
  ('00000000-0000-4000-8000-0000000000b2', 'search bench neighbour', now());
insert into additional_fields (id, community_id, name, type, order_number, created_at, modified_at) values
  ('00000000-0000-4000-8000-0000000000c1', '00000000-0000-4000-8000-0000000000a1', 'City', 'TEXT', 1, now(), now()),
  ('00000000-0000-4000-8000-0000000000c2', '00000000-0000-4000-8000-0000000000a1', 'Department', 'TEXT', 2, now(), now());
-- Names: 100 first names; last names built from three syllables (8,000 of them, ~125 members each).
insert into members (id, community_id, external_id, first_name, last_name, email_address, created_at, modified_at)
select md5('m' || i)::uuid, c.id, 'm-' || i,
       (array['Ada','Alan','Grace','Linus','Edsger','Barbara','Donald','Margaret','Ken','Dennis'])[1 + i % 10]
         || (array['','a','e','o','i','ie','y','us','ine','an'])[1 + (i / 10) % 10],
       initcap((array['ber','lin','ham','ton','mar','kov','sch','neu','wal','dor','fel','gru','hei','kra','lan','mei','ost','pet','ros','sto'])[1 + (i * 7) % 20]
         || (array['ri','wa','do','ke','ma','su','ti','le','no','ba','pe','gi','fo','cu','ja','vi','ze','ha','lo','me'])[1 + (i * 13 / 20) % 20]
         || (array['nn','rt','ck','ld','st','nd','rg','ff','tz','ll','ss','mm','pp','rn','gh','th','sk','lm','rd','ns'])[1 + (i * 17 / 400) % 20]),
       'user' || i || '@example' || (i % 97) || '.org',
       timestamptz '2026-01-01' + i * interval '1 second', timestamptz '2026-01-01' + i * interval '1 second'
  from generate_series(1, :members) i, (select '00000000-0000-4000-8000-0000000000a1'::uuid as id) c;
-- The neighbour: the same names and addresses for its first 10,000 (never found by the bench community's key).
insert into members (id, community_id, external_id, first_name, last_name, email_address, created_at, modified_at)
select md5('n' || m.external_id)::uuid, '00000000-0000-4000-8000-0000000000b2', m.external_id, m.first_name, m.last_name, m.email_address, m.created_at, m.modified_at
  from members m where m.community_id = '00000000-0000-4000-8000-0000000000a1' and m.created_at < timestamptz '2026-01-01' + 10001 * interval '1 second';
-- City: 100 values, each held by 1% of the members; Department: 20 values (5% each).
insert into member_field_values (member_id, field_id, value)
select m.id, f.id, case when f.name = 'City' then 'City ' || (abs(hashtext(m.id::text)) % 100) else 'Dept ' || (abs(hashtext(m.external_id)) % 20) end
  from members m cross join additional_fields f
 where m.community_id = '00000000-0000-4000-8000-0000000000a1' and f.community_id = m.community_id;
alter table members enable trigger user;
alter table member_field_values enable trigger user;
analyze members;
analyze member_field_values;
analyze additional_fields;
