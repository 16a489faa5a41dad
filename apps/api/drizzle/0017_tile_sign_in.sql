CREATE TABLE "tile_sign_in_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_user_id" uuid NOT NULL,
	"tile_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tile_sign_in_tokens" ADD CONSTRAINT "tile_sign_in_tokens_application_user_id_application_users_id_fk" FOREIGN KEY ("application_user_id") REFERENCES "public"."application_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tile_sign_in_tokens" ADD CONSTRAINT "tile_sign_in_tokens_tile_id_tiles_id_fk" FOREIGN KEY ("tile_id") REFERENCES "public"."tiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "tile_sign_in_tokens_token_hash_key" ON "tile_sign_in_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "tile_sign_in_tokens_user_idx" ON "tile_sign_in_tokens" USING btree ("application_user_id");