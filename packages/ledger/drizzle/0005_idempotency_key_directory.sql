CREATE TABLE "idempotency_key_directory" (
	"principal" text NOT NULL,
	"key" text NOT NULL,
	"workspace_id" text NOT NULL,
	"fingerprint" text NOT NULL,
	"created_at" double precision NOT NULL,
	CONSTRAINT "idempotency_key_directory_principal_key_pk" PRIMARY KEY("principal","key")
);
--> statement-breakpoint
DROP INDEX "idempotency_principal_key";--> statement-breakpoint
-- Keys used before keep conflicting in other workspaces: each enters the directory where it was first used.
INSERT INTO "idempotency_key_directory" ("principal", "key", "workspace_id", "fingerprint", "created_at") SELECT DISTINCT ON ("principal", "key") "principal", "key", "workspace_id", "fingerprint", "created_at" FROM "idempotency_records" ORDER BY "principal", "key", "created_at" ON CONFLICT DO NOTHING;
