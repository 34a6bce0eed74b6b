ALTER TABLE "deletion_receipts" ADD COLUMN "erased_key_sha256" text;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "key" "bytea";--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "key_sha256" text;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "retracted_at" double precision;--> statement-breakpoint
-- Memories retracted before this migration: their newest revision's record ended with the retraction.
UPDATE "memories" AS m SET "retracted_at" = r."recorded_until" FROM "revisions" AS r WHERE r."workspace_id" = m."workspace_id" AND r."memory_id" = m."id" AND r."generation" = m."generation" AND r."recorded_until" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "memories_key_held" ON "memories" USING btree ("workspace_id","namespace_id","key") WHERE key is not null and retracted_at is null;--> statement-breakpoint
CREATE INDEX "memories_key" ON "memories" USING btree ("workspace_id","namespace_id","key") WHERE key is not null;
