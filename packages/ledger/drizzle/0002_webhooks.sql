CREATE TABLE "webhooks" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"url" "bytea" NOT NULL,
	"namespace_id" text,
	"description" "bytea",
	"secret" text NOT NULL,
	"created_at" double precision NOT NULL,
	"created_by" text NOT NULL,
	"deleted_at" double precision,
	"disabled_at" double precision,
	"disabled_reason" text,
	"delivered_sequence" bigint NOT NULL,
	"last_delivered_at" double precision,
	"last_error" text,
	"last_error_at" double precision,
	"failing_since" double precision,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" double precision,
	"lease_until" double precision,
	CONSTRAINT "webhooks_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE INDEX "webhooks_order" ON "webhooks" USING btree ("workspace_id","created_at","id");