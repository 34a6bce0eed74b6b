import { CAPABILITIES } from '@tms/catalog';
import { describe, expect, it } from 'vitest';
import { capabilitiesOn, type GrantLike, type NamespaceLike, reachOf, subtreeCapabilitiesOn } from '../src/index';

// A small tree:  root ─ team ─ project ─ deep
//                     └ other
const root: NamespaceLike = { id: 'ns_root', ancestorIds: [] };
const team: NamespaceLike = { id: 'ns_team', ancestorIds: ['ns_root'] };
const project: NamespaceLike = { id: 'ns_project', ancestorIds: ['ns_root', 'ns_team'] };
const deep: NamespaceLike = { id: 'ns_deep', ancestorIds: ['ns_root', 'ns_team', 'ns_project'] };
const other: NamespaceLike = { id: 'ns_other', ancestorIds: ['ns_root'] };

const grant = (namespaceId: string, capabilities: string[], inherit: boolean): GrantLike => ({
  namespaceId,
  capabilities,
  inherit,
});

const sorted = (set: Set<string>) => [...set].sort();
const ALL = [...CAPABILITIES].sort();

describe('capabilitiesOn', () => {
  it('holds nothing without grants', () => {
    expect(sorted(capabilitiesOn(project, [], false))).toEqual([]);
  });

  it('a grant on the namespace itself applies whether or not it inherits', () => {
    expect(sorted(capabilitiesOn(team, [grant('ns_team', ['read'], false)], false))).toEqual(['read']);
    expect(sorted(capabilitiesOn(team, [grant('ns_team', ['observe'], true)], false))).toEqual(['observe']);
  });

  it('an inherit grant reaches every descendant, a non-inherit grant none', () => {
    const inherited = [grant('ns_team', ['read'], true)];
    expect(sorted(capabilitiesOn(project, inherited, false))).toEqual(['read']);
    expect(sorted(capabilitiesOn(deep, inherited, false))).toEqual(['read']);
    const local = [grant('ns_team', ['read'], false)];
    expect(sorted(capabilitiesOn(project, local, false))).toEqual([]);
    expect(sorted(capabilitiesOn(deep, local, false))).toEqual([]);
  });

  it('never reaches upwards or sideways', () => {
    const grants = [grant('ns_team', ['read', 'observe'], true)];
    expect(sorted(capabilitiesOn(root, grants, false))).toEqual([]);
    expect(sorted(capabilitiesOn(other, grants, false))).toEqual([]);
  });

  it('is the union of the own grant and the inherit grants of all ancestors', () => {
    const grants = [
      grant('ns_root', ['read'], true),
      grant('ns_team', ['observe'], true),
      grant('ns_team', ['forget'], false), // not inherited: does not reach project
      grant('ns_project', ['verify'], false),
      grant('ns_deep', ['correct'], false), // below: does not reach project
    ];
    expect(sorted(capabilitiesOn(project, grants, false))).toEqual(['observe', 'read', 'verify']);
    expect(sorted(capabilitiesOn(team, grants, false))).toEqual(['forget', 'observe', 'read']);
    expect(sorted(capabilitiesOn(deep, grants, false))).toEqual(['correct', 'observe', 'read']);
  });

  it('admin implies every capability, also when inherited', () => {
    expect(sorted(capabilitiesOn(team, [grant('ns_team', ['admin'], false)], false))).toEqual(ALL);
    expect(sorted(capabilitiesOn(deep, [grant('ns_root', ['admin'], true)], false))).toEqual(ALL);
    // ... but a non-inherited admin stops at its namespace.
    expect(sorted(capabilitiesOn(project, [grant('ns_team', ['admin'], false)], false))).toEqual([]);
  });

  it('workspace admins hold every capability everywhere, grants or not', () => {
    expect(sorted(capabilitiesOn(deep, [], true))).toEqual(ALL);
    expect(sorted(capabilitiesOn(other, [grant('ns_team', ['read'], false)], true))).toEqual(ALL);
  });

  it('returns a fresh set each time (callers may not corrupt a shared one)', () => {
    const a = capabilitiesOn(root, [], true);
    a.delete('read');
    expect(capabilitiesOn(root, [], true).has('read')).toBe(true);
    const b = capabilitiesOn(team, [grant('ns_team', ['admin'], false)], false);
    b.clear();
    expect(capabilitiesOn(team, [grant('ns_team', ['admin'], false)], false).size).toBe(CAPABILITIES.length);
  });
});

describe('subtreeCapabilitiesOn', () => {
  it('counts only inherit grants on the namespace and its ancestors', () => {
    const grants = [
      grant('ns_team', ['admin'], false),
      grant('ns_root', ['read'], true),
      grant('ns_team', ['observe'], true),
    ];
    // Own (non-inherit) admin gives everything on the namespace, but not on its subtree.
    expect(sorted(capabilitiesOn(team, grants, false))).toEqual(ALL);
    expect(sorted(subtreeCapabilitiesOn(team, grants, false))).toEqual(['observe', 'read']);
  });

  it('an inherited admin is admin on the whole subtree', () => {
    expect(sorted(subtreeCapabilitiesOn(project, [grant('ns_team', ['admin'], true)], false))).toEqual(ALL);
    expect(sorted(subtreeCapabilitiesOn(project, [grant('ns_project', ['admin'], true)], false))).toEqual(ALL);
  });

  it('a grant below the namespace does not count', () => {
    expect(sorted(subtreeCapabilitiesOn(team, [grant('ns_project', ['read'], true)], false))).toEqual([]);
  });

  it('workspace admins hold everything on every subtree', () => {
    expect(sorted(subtreeCapabilitiesOn(root, [], true))).toEqual(ALL);
  });
});

describe('reachOf', () => {
  it('lists the namespaces granted the capability directly, and the inherit ones as subtree roots', () => {
    const grants = [
      grant('ns_team', ['read'], true),
      grant('ns_other', ['read', 'observe'], false),
      grant('ns_project', ['observe'], true), // no read: not in the reach of read
      grant('ns_deep', ['admin'], false), // admin implies read
    ];
    expect(reachOf('read', grants)).toEqual({ direct: ['ns_team', 'ns_other', 'ns_deep'], subtreeRoots: ['ns_team'] });
    expect(reachOf('observe', grants)).toEqual({
      direct: ['ns_other', 'ns_project', 'ns_deep'],
      subtreeRoots: ['ns_project'],
    });
    expect(reachOf('verify', grants)).toEqual({ direct: ['ns_deep'], subtreeRoots: [] });
  });

  it('is empty without grants', () => {
    expect(reachOf('read', [])).toEqual({ direct: [], subtreeRoots: [] });
  });

  it('agrees with capabilitiesOn for every namespace of the tree', () => {
    const grants = [
      grant('ns_team', ['read'], true),
      grant('ns_root', ['observe'], false),
      grant('ns_other', ['admin'], false),
      grant('ns_deep', ['verify'], true),
    ];
    const all = [root, team, project, deep, other];
    for (const capability of CAPABILITIES) {
      const reach = reachOf(capability, grants);
      for (const namespace of all) {
        const reached =
          reach.direct.includes(namespace.id) || namespace.ancestorIds.some((a) => reach.subtreeRoots.includes(a));
        expect(reached, `${capability} on ${namespace.id}`).toBe(
          capabilitiesOn(namespace, grants, false).has(capability),
        );
      }
    }
  });
});
