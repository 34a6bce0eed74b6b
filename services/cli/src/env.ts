import { z } from 'zod';

const schema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  DEV_AUTH: z.enum(['0', '1']).default('0'),
  NODE_ENV: z.string().default('development'),
});

export type CliEnv = z.infer<typeof schema>;

export function parseEnv(source: Record<string, string | undefined>): CliEnv {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  throw new Error(
    `invalid configuration: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
  );
}
