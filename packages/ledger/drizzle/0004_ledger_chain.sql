ALTER TABLE "commits" ADD COLUMN "chain_hash" text;--> statement-breakpoint
ALTER TABLE "workspace_heads" ADD COLUMN "chain_hash" text;