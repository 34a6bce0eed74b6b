CREATE TABLE "actors" (
	"id" text PRIMARY KEY NOT NULL,
	"issuer" text NOT NULL,
	"subject" text NOT NULL,
	"created_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "commits" (
	"workspace_id" text NOT NULL,
	"sequence" bigint NOT NULL,
	"recorded_at" double precision NOT NULL,
	"operation" text NOT NULL,
	"actor_id" text NOT NULL,
	"subject_ids" text[] NOT NULL,
	CONSTRAINT "commits_workspace_id_sequence_pk" PRIMARY KEY("workspace_id","sequence")
);
--> statement-breakpoint
CREATE TABLE "deletion_receipts" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"subject_kind" text NOT NULL,
	"subject_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"revision_ids" text[] NOT NULL,
	"erased_sha256" text[] NOT NULL,
	"recorder_actor_id" text NOT NULL,
	"recorded_at" double precision NOT NULL,
	"commit_sequence" bigint NOT NULL,
	CONSTRAINT "deletion_receipts_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "enrollments" (
	"issuer" text NOT NULL,
	"subject" text NOT NULL,
	"enrolled_at" double precision NOT NULL,
	CONSTRAINT "enrollments_issuer_subject_pk" PRIMARY KEY("issuer","subject")
);
--> statement-breakpoint
CREATE TABLE "evidence" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"source_locator" "bytea" NOT NULL,
	"content_root_sha256" text NOT NULL,
	"excerpt" "bytea",
	"excerpt_sha256" text NOT NULL,
	"recorder_actor_id" text NOT NULL,
	"recorded_at" double precision NOT NULL,
	"commit_sequence" bigint NOT NULL,
	"purged_at" double precision,
	CONSTRAINT "evidence_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "grants" (
	"workspace_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"target_kind" text NOT NULL,
	"target_id" text NOT NULL,
	"capabilities" text[] NOT NULL,
	"inherit" boolean NOT NULL,
	"position" integer NOT NULL,
	CONSTRAINT "grants_workspace_id_namespace_id_target_kind_target_id_pk" PRIMARY KEY("workspace_id","namespace_id","target_kind","target_id")
);
--> statement-breakpoint
CREATE TABLE "idempotency_records" (
	"workspace_id" text NOT NULL,
	"principal" text NOT NULL,
	"key" text NOT NULL,
	"operation" text NOT NULL,
	"fingerprint" text NOT NULL,
	"status" integer NOT NULL,
	"body" text NOT NULL,
	"subject_ids" text[] DEFAULT '{}' NOT NULL,
	"created_at" double precision NOT NULL,
	CONSTRAINT "idempotency_records_workspace_id_principal_key_pk" PRIMARY KEY("workspace_id","principal","key")
);
--> statement-breakpoint
CREATE TABLE "index_state" (
	"workspace_id" text NOT NULL,
	"provider" text NOT NULL,
	"indexed_sequence" bigint NOT NULL,
	"updated_at" double precision NOT NULL,
	CONSTRAINT "index_state_workspace_id_provider_pk" PRIMARY KEY("workspace_id","provider")
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"workspace_id" text NOT NULL,
	"actor_id" text NOT NULL,
	"role" text NOT NULL,
	"position" integer NOT NULL,
	CONSTRAINT "memberships_workspace_id_actor_id_pk" PRIMARY KEY("workspace_id","actor_id")
);
--> statement-breakpoint
CREATE TABLE "memories" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"kind" text NOT NULL,
	"generation" bigint NOT NULL,
	"created_at" double precision NOT NULL,
	"purged_at" double precision,
	CONSTRAINT "memories_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "namespaces" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"parent_id" text,
	"name" "bytea" NOT NULL,
	"ancestor_ids" text[] NOT NULL,
	"path_key" "bytea" NOT NULL,
	"created_at" double precision NOT NULL,
	"updated_at" double precision NOT NULL,
	CONSTRAINT "namespaces_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "revisions" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"memory_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"kind" text NOT NULL,
	"generation" bigint NOT NULL,
	"text" "bytea",
	"status" text NOT NULL,
	"valid_from" double precision NOT NULL,
	"valid_to" double precision,
	"recorded_at" double precision NOT NULL,
	"recorded_until" double precision,
	"commit_sequence" bigint NOT NULL,
	"evidence_ids" text[] NOT NULL,
	"support_revision_ids" text[] NOT NULL,
	"attestation_id" text,
	"claim_sha256" text,
	"attestation_evidence_ids" text[],
	"attestation_verification_ids" text[],
	"attestation_verifier_actor_id" text,
	"attestation_recorded_at" double precision,
	"invalidated_at" double precision,
	"invalidation_cause_revision_id" text,
	"invalidation_reason" text,
	"purged_at" double precision,
	CONSTRAINT "revisions_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "service_settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "verifications" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"evidence_id" text NOT NULL,
	"content_root_sha256" text NOT NULL,
	"excerpt_sha256" text NOT NULL,
	"verdict" text NOT NULL,
	"verifier_actor_id" text NOT NULL,
	"recorded_at" double precision NOT NULL,
	CONSTRAINT "verifications_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "workspace_heads" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"sequence" bigint NOT NULL,
	"recorded_at" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" "bytea" NOT NULL,
	"created_at" double precision NOT NULL,
	"created_by" text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "actors_issuer_subject" ON "actors" USING btree ("issuer","subject");--> statement-breakpoint
CREATE UNIQUE INDEX "evidence_dedup" ON "evidence" USING btree ("workspace_id","namespace_id","excerpt_sha256") WHERE purged_at is null;--> statement-breakpoint
CREATE INDEX "idempotency_principal_key" ON "idempotency_records" USING btree ("principal","key");--> statement-breakpoint
CREATE INDEX "memories_namespace" ON "memories" USING btree ("workspace_id","namespace_id");--> statement-breakpoint
CREATE INDEX "namespaces_path" ON "namespaces" USING btree ("workspace_id","path_key","id");--> statement-breakpoint
CREATE INDEX "namespaces_parent" ON "namespaces" USING btree ("workspace_id","parent_id");--> statement-breakpoint
CREATE UNIQUE INDEX "revisions_generation" ON "revisions" USING btree ("workspace_id","memory_id","generation");--> statement-breakpoint
CREATE INDEX "revisions_namespace_current" ON "revisions" USING btree ("workspace_id","namespace_id","memory_id");--> statement-breakpoint
CREATE INDEX "revisions_support" ON "revisions" USING gin ("support_revision_ids");--> statement-breakpoint
CREATE INDEX "verifications_evidence" ON "verifications" USING btree ("workspace_id","evidence_id","recorded_at");