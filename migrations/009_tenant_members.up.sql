-- Analyst roles bound to tenants. Until now an analyst saw the tenant its
-- agentwire.tenant setting named, and any role may set that setting: the
-- policies kept honest tooling to one tenant but did not stop an analyst
-- from reading another's rows. A role named in tenant_members now sees
-- the tenants it is bound to and no other, whatever it sets (the setting
-- can only narrow them to one). A role bound to nothing keeps the old
-- behaviour, for tooling trusted to pick its tenant.
--
-- The binding applies to the role that logged in (session_user) as well
-- as the current one: a bound analyst who is also a member of an unbound
-- role (agentwire_analyst itself) keeps its binding after SET ROLE.
CREATE TABLE tenant_members (
    role_name  text        NOT NULL,
    tenant_id  text        NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (role_name, tenant_id)
);
-- A binding of a role that does not exist would bind nothing, and leave
-- the role it was meant for unbound, free to pick any tenant: refused,
-- so that a misspelt name (role names are case-sensitive here) is caught.
CREATE FUNCTION tenant_members_role_exists() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = NEW.role_name) THEN
        RAISE EXCEPTION 'tenant_members: there is no role %', quote_literal(NEW.role_name)
            USING ERRCODE = 'foreign_key_violation',
                  HINT = 'use the name as pg_roles spells it: an unquoted name is in lower case';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER role_exists BEFORE INSERT OR UPDATE OF role_name ON tenant_members
    FOR EACH ROW EXECUTE FUNCTION tenant_members_role_exists();

-- A role reads its own bindings (the policies below need them) and
-- nobody else's; only the owner writes them.
ALTER TABLE tenant_members ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_bindings ON tenant_members USING (role_name IN (session_user, current_user));

-- The tenants the current role may read. BEGIN ATOMIC resolves
-- tenant_members when the function is created, so a temporary table of
-- the same name cannot stand in for it; the function runs as the caller,
-- so the policy above decides which bindings it reads.
CREATE FUNCTION visible_tenants() RETURNS text[] LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE
        WHEN EXISTS (SELECT FROM tenant_members WHERE role_name IN (session_user, current_user))
        THEN ARRAY(SELECT DISTINCT tenant_id FROM tenant_members
                   WHERE role_name IN (session_user, current_user)
                     AND coalesce(nullif(current_setting('agentwire.tenant', true), ''), tenant_id) = tenant_id)
        ELSE ARRAY[current_setting('agentwire.tenant', true)]
    END;
END;

-- Every tenant policy of this schema reads it. The sub-select (cast, or
-- ANY would read it as a set of arrays) makes it an
-- init plan, computed once per query rather than once per row.
DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT tablename FROM pg_policies
             WHERE schemaname = current_schema() AND policyname = 'tenant_isolation'
    LOOP
        EXECUTE format('ALTER POLICY tenant_isolation ON %I USING (tenant_id = ANY ((SELECT visible_tenants())::text[]))', t);
    END LOOP;
END $$;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON tenant_members TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the table tenant_members; grant analysts SELECT yourself';
END $$;
