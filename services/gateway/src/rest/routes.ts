import { OPERATIONS, type Operation } from '@tms/catalog';

interface Route {
  template: string;
  pattern: RegExp;
  paramNames: string[];
  byMethod: Map<string, Operation>;
}

export type RouteMatch =
  | { kind: 'operation'; operation: Operation; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'bad_path' }
  | { kind: 'none' };

/** The /v1 route table, derived from the catalog's method and path templates. */
export class RouteTable {
  private readonly routes: Route[] = [];

  constructor(operations: readonly Operation[] = OPERATIONS) {
    const byTemplate = new Map<string, Route>();
    for (const operation of operations) {
      let route = byTemplate.get(operation.path);
      if (!route) {
        const paramNames: string[] = [];
        const source = operation.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) => {
          paramNames.push(name);
          return '([^/]+)';
        });
        route = { template: operation.path, pattern: new RegExp(`^${source}$`), paramNames, byMethod: new Map() };
        byTemplate.set(operation.path, route);
        this.routes.push(route);
      }
      route.byMethod.set(operation.method, operation);
    }
  }

  match(method: string, pathname: string): RouteMatch {
    for (const route of this.routes) {
      const m = route.pattern.exec(pathname);
      if (!m) continue;
      const operation = route.byMethod.get(method);
      if (!operation) return { kind: 'method_not_allowed', allow: [...route.byMethod.keys()] };
      const params: Record<string, string> = {};
      try {
        route.paramNames.forEach((name, i) => {
          params[name] = decodeURIComponent(m[i + 1] as string);
        });
      } catch {
        return { kind: 'bad_path' };
      }
      return { kind: 'operation', operation, params };
    }
    return { kind: 'none' };
  }
}
