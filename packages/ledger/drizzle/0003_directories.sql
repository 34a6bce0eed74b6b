CREATE TABLE "credential_directory" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "directory_idempotency_records" (
	"principal" text NOT NULL,
	"key" text NOT NULL,
	"operation" text NOT NULL,
	"fingerprint" text NOT NULL,
	"status" integer NOT NULL,
	"body" text NOT NULL,
	"created_at" double precision NOT NULL,
	CONSTRAINT "directory_idempotency_records_principal_key_pk" PRIMARY KEY("principal","key")
);
--> statement-breakpoint
CREATE TABLE "membership_directory" (
	"actor_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	CONSTRAINT "membership_directory_actor_id_workspace_id_pk" PRIMARY KEY("actor_id","workspace_id")
);
--> statement-breakpoint
-- Existing credentials keep authenticating: their ids enter the directory.
INSERT INTO "credential_directory" ("id", "workspace_id") SELECT "id", "workspace_id" FROM "credentials" ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "membership_directory" ("actor_id", "workspace_id") SELECT "actor_id", "workspace_id" FROM "memberships" ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "directory_idempotency_records" ("principal", "key", "operation", "fingerprint", "status", "body", "created_at") SELECT "principal", "key", "operation", "fingerprint", "status", "body", "created_at" FROM "idempotency_records" WHERE "workspace_id" = '' ON CONFLICT DO NOTHING;
--> statement-breakpoint
DELETE FROM "idempotency_records" WHERE "workspace_id" = '';
