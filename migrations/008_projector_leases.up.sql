-- The projector's lease: per consumer, a generation that each projector
-- taking over (holding the consumer's advisory lock) increments. Every
-- batch transaction reads it just before it commits and refuses to commit
-- under an earlier generation, and the one taking over waits out the
-- batches that read the old one (see internal/project): no batch of a
-- projector that lost its lock commits once another has started.
--
-- This is the one table without tenant_id: it says which projector is
-- active, and holds nothing of any tenant. Row-level security is on
-- without a policy and the analyst role has no grant: only the owner (the
-- projector) reads it. A rebuild leaves it alone: generations only grow.
CREATE TABLE projector_leases (
    consumer   text        PRIMARY KEY,
    generation bigint      NOT NULL,
    -- The backend holding the advisory lock when the lease was taken, for
    -- an operator asking pg_stat_activity who it is.
    holder     integer     NOT NULL,
    taken_at   timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE projector_leases ENABLE ROW LEVEL SECURITY;
