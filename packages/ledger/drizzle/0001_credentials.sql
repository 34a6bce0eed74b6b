CREATE TABLE "credentials" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"kind" text NOT NULL,
	"installation_id" text,
	"name" "bytea" NOT NULL,
	"actor_id" text NOT NULL,
	"secret_sha256" text NOT NULL,
	"capabilities" text[] NOT NULL,
	"namespace_ids" text[],
	"expires_at" double precision,
	"created_at" double precision NOT NULL,
	"created_by" text NOT NULL,
	"revoked_at" double precision,
	CONSTRAINT "credentials_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "installations" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"name" "bytea" NOT NULL,
	"created_at" double precision NOT NULL,
	"created_by" text NOT NULL,
	"revoked_at" double precision,
	CONSTRAINT "installations_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE INDEX "credentials_by_id" ON "credentials" USING btree ("id");--> statement-breakpoint
CREATE INDEX "credentials_order" ON "credentials" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "installations_order" ON "installations" USING btree ("workspace_id","created_at","id");