-- The chain's head hash is the last commit's chain_hash: the head no longer keeps a copy (one update fewer a write).
ALTER TABLE "workspace_heads" DROP COLUMN "chain_hash";