// Shared by the programs that run in the fresh project: the client from the environment, and
// errors as JSON (what the test asserts on).
import { createClient } from '@tms/client';

export const client = createClient({
  baseUrl: process.env.TMS_URL,
  token: process.env.TMS_TOKEN,
  workspace: process.env.TMS_WORKSPACE,
});

/** The error `work` throws, as its name, code, detail and message; "no error" when it does not throw. */
export async function failure(work) {
  try {
    await work();
    return 'no error';
  } catch (error) {
    return { name: error.name, code: error.code ?? null, detail: error.detail ?? null, message: error.message };
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** An item as JSON: its dates as ISO strings. */
export function itemJson(item) {
  if (!item) return item;
  return { ...item, createdAt: item.createdAt.toISOString(), updatedAt: item.updatedAt.toISOString() };
}

export function print(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
