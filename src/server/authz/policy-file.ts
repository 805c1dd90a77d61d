/**
 * The authorization policy file (`--authorization-policy-file`): YAML or JSON, one or more
 * documents (or a `List`), each an rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding or
 * ClusterRoleBinding, validated as the apiserver validates them (pkg/apis/rbac/validation:
 * ValidatePolicyRule, ValidateRoleBindingSubject, the roleRef checks). Unlike the apiserver, a
 * binding to a role that exists neither in the file nor built in is an error (a typo would
 * otherwise grant nothing, silently), and the built-in ClusterRoles cannot be redefined (add rules
 * to view/edit/admin with an aggregate-to label instead). Pure.
 */
import { parseAllDocuments } from 'yaml';
import { InvalidArgumentError } from '../../shared/errors.js';
import { kBuiltinRoleNames } from './bootstrap.js';
import type { Binding, Policy, PolicyRule, Role, Subject } from './rbac.js';

const kGroupVersion = 'rbac.authorization.k8s.io/v1';
const kRbacGroup = 'rbac.authorization.k8s.io';
const kKinds = ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Errors: collects `<where>: <field>: <message>` lines; `at` shares the lines under another place. */
class Errors {
  constructor(
    private readonly where: string,
    readonly lines: string[] = [],
  ) {}
  at(where: string): Errors {
    return new Errors(where, this.lines);
  }
  add(field: string, message: string): void {
    this.lines.push(`${this.where}: ${field}: ${message}`);
  }
}

/** strings: a list of non-empty strings at `field`, or an error. */
function strings(v: unknown, field: string, errs: Errors, required: boolean): string[] {
  if (v === undefined || v === null) {
    if (required) errs.add(field, 'Required value');
    return [];
  }
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    errs.add(field, 'Invalid value: must be a list of strings');
    return [];
  }
  return v as string[];
}

function parseRule(v: unknown, field: string, namespaced: boolean, errs: Errors): PolicyRule | undefined {
  if (!isObj(v)) {
    errs.add(field, 'Invalid value: must be an object');
    return undefined;
  }
  const verbs = strings(v.verbs, `${field}.verbs`, errs, true);
  if (v.verbs !== undefined && verbs.length === 0) errs.add(`${field}.verbs`, 'Required value: verbs must contain at least one value');
  const apiGroups = strings(v.apiGroups, `${field}.apiGroups`, errs, false);
  const resources = strings(v.resources, `${field}.resources`, errs, false);
  const resourceNames = strings(v.resourceNames, `${field}.resourceNames`, errs, false);
  const nonResourceURLs = strings(v.nonResourceURLs, `${field}.nonResourceURLs`, errs, false);
  if (nonResourceURLs.length > 0) {
    if (namespaced) errs.add(`${field}.nonResourceURLs`, 'Invalid value: namespaced rules cannot apply to non-resource URLs');
    if (apiGroups.length > 0 || resources.length > 0)
      errs.add(`${field}.nonResourceURLs`, 'Invalid value: rules cannot apply to both regular resources and non-resource URLs');
    for (const u of nonResourceURLs)
      if (!u.startsWith('/') && u !== '*')
        errs.add(`${field}.nonResourceURLs`, `Invalid value: ${JSON.stringify(u)}: must start with "/" or be "*"`);
    return { verbs, nonResourceURLs };
  }
  if (apiGroups.length === 0) errs.add(`${field}.apiGroups`, 'Required value: resource rules must supply at least one api group');
  if (resources.length === 0) errs.add(`${field}.resources`, 'Required value: resource rules must supply at least one resource');
  return { verbs, apiGroups, resources, ...(resourceNames.length ? { resourceNames } : {}) };
}

function parseSubject(v: unknown, field: string, namespaced: boolean, errs: Errors): Subject | undefined {
  if (!isObj(v)) {
    errs.add(field, 'Invalid value: must be an object');
    return undefined;
  }
  const name = typeof v.name === 'string' ? v.name : '';
  if (name === '') errs.add(`${field}.name`, 'Required value');
  const namespace = typeof v.namespace === 'string' ? v.namespace : '';
  switch (v.kind) {
    case 'ServiceAccount':
      if (v.apiGroup !== undefined && v.apiGroup !== '')
        errs.add(`${field}.apiGroup`, `Unsupported value: ${JSON.stringify(v.apiGroup)}: supported values: ""`);
      if (namespace === '' && !namespaced) errs.add(`${field}.namespace`, 'Required value');
      return { kind: 'ServiceAccount', name, ...(namespace ? { namespace } : {}) };
    case 'User':
    case 'Group':
      if (v.apiGroup !== undefined && v.apiGroup !== kRbacGroup)
        errs.add(`${field}.apiGroup`, `Unsupported value: ${JSON.stringify(v.apiGroup)}: supported values: "${kRbacGroup}"`);
      return { kind: v.kind, name };
    default:
      errs.add(`${field}.kind`, `Unsupported value: ${JSON.stringify(v.kind ?? '')}: supported values: "ServiceAccount", "User", "Group"`);
      return undefined;
  }
}

function parseObject(o: Obj, errs: Errors, policy: Policy): void {
  if (o.apiVersion !== kGroupVersion)
    errs.add('apiVersion', `Unsupported value: ${JSON.stringify(o.apiVersion ?? '')}: supported values: "${kGroupVersion}"`);
  const kind = o.kind as string;
  const meta = isObj(o.metadata) ? o.metadata : {};
  const name = typeof meta.name === 'string' ? meta.name : '';
  const namespace = typeof meta.namespace === 'string' ? meta.namespace : '';
  const namespaced = kind === 'Role' || kind === 'RoleBinding';
  if (name === '') errs.add('metadata.name', 'Required value');
  if (namespaced && namespace === '') errs.add('metadata.namespace', `Required value: a ${kind} is namespaced`);
  if (!namespaced && namespace !== '') errs.add('metadata.namespace', `Forbidden: a ${kind} is not namespaced`);
  if (kind === 'Role' || kind === 'ClusterRole') {
    if (kind === 'ClusterRole' && kBuiltinRoleNames.has(name))
      errs.add(
        'metadata.name',
        `Forbidden: ClusterRole ${JSON.stringify(name)} is built in (add rules to view, edit or admin with a ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-<role>: "true")`,
      );
    const rules =
      o.rules === undefined || o.rules === null
        ? []
        : Array.isArray(o.rules)
          ? o.rules
          : (errs.add('rules', 'Invalid value: must be a list'), []);
    const role: Role = { kind, name, namespace, labels: isObj(meta.labels) ? (meta.labels as Record<string, string>) : {}, rules: [] };
    rules.forEach((r, i) => {
      const p = parseRule(r, `rules[${i}]`, namespaced, errs);
      if (p) role.rules.push(p);
    });
    if (kind === 'ClusterRole' && o.aggregationRule !== undefined) {
      const selectors =
        isObj(o.aggregationRule) && Array.isArray(o.aggregationRule.clusterRoleSelectors) ? o.aggregationRule.clusterRoleSelectors : [];
      role.aggregate = [];
      selectors.forEach((s: unknown, i: number) => {
        const f = `aggregationRule.clusterRoleSelectors[${i}]`;
        if (!isObj(s) || s.matchExpressions !== undefined || !isObj(s.matchLabels))
          errs.add(f, 'Unsupported value: only matchLabels selectors are supported');
        else role.aggregate!.push(s.matchLabels as Record<string, string>);
      });
    }
    policy.roles.push(role);
    return;
  }
  const subjects: Subject[] = [];
  const raw =
    o.subjects === undefined || o.subjects === null
      ? []
      : Array.isArray(o.subjects)
        ? o.subjects
        : (errs.add('subjects', 'Invalid value: must be a list'), []);
  raw.forEach((s, i) => {
    const p = parseSubject(s, `subjects[${i}]`, namespaced, errs);
    if (p) subjects.push(p);
  });
  const ref = isObj(o.roleRef) ? o.roleRef : undefined;
  if (!ref) {
    errs.add('roleRef', 'Required value');
    return;
  }
  if (ref.apiGroup !== kRbacGroup)
    errs.add('roleRef.apiGroup', `Unsupported value: ${JSON.stringify(ref.apiGroup ?? '')}: supported values: "${kRbacGroup}"`);
  const refKinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!refKinds.includes(ref.kind as string))
    errs.add(
      'roleRef.kind',
      `Unsupported value: ${JSON.stringify(ref.kind ?? '')}: supported values: ${refKinds.map((k) => `"${k}"`).join(', ')}`,
    );
  if (typeof ref.name !== 'string' || ref.name === '') errs.add('roleRef.name', 'Required value');
  policy.bindings.push({
    kind: kind as Binding['kind'],
    name,
    namespace,
    subjects,
    roleRef: { kind: ref.kind as 'Role' | 'ClusterRole', name: String(ref.name ?? '') },
  });
}

/**
 * parsePolicyFile reads the text of an authorization policy file.
 * @param origin the file's path, named in every error.
 * @param builtinRoles the ClusterRoles bindings may reference besides the file's own.
 * @returns the file's roles and bindings (the caller adds the built-in policy).
 * @throws InvalidArgumentError `<origin>: document N (Kind "name"): <field>: <message>` for each
 *   problem found (all of them, one per line), or for YAML that does not parse.
 */
export function parsePolicyFile(text: string, origin: string, builtinRoles: ReadonlySet<string> = kBuiltinRoleNames): Policy {
  const policy: Policy = { roles: [], bindings: [] };
  const errs = new Errors(origin);
  const docs = parseAllDocuments(text, { prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, d) => {
    const where = `${origin}: document ${d + 1}`;
    if (doc.errors.length > 0) {
      errs.at(where).add('yaml', doc.errors[0].message);
      return;
    }
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    if (value === null || value === undefined) return;
    const items =
      isObj(value) && (value.kind === 'List' || String(value.kind ?? '').endsWith('List')) && Array.isArray(value.items)
        ? value.items.map((item, i) => ({ item, at: `${where} items[${i}]` }))
        : [{ item: value, at: where }];
    for (const { item, at } of items) {
      if (!isObj(item)) {
        errs.at(at).add('(root)', 'Invalid value: must be an object');
        continue;
      }
      const named = `${at} (${String(item.kind ?? '?')} ${JSON.stringify((isObj(item.metadata) && item.metadata.name) || '')})`;
      if (!kKinds.includes(item.kind as string)) {
        errs
          .at(named)
          .add(
            'kind',
            `Unsupported value: ${JSON.stringify(item.kind ?? '')}: supported values: ${kKinds.map((k) => `"${k}"`).join(', ')}`,
          );
        continue;
      }
      parseObject(item, errs.at(named), policy);
    }
  });
  const seen = new Set<string>();
  for (const o of [...policy.roles, ...policy.bindings]) {
    const key = `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
    if (seen.has(key)) errs.add(key, 'Duplicate value: defined twice');
    seen.add(key);
  }
  for (const b of policy.bindings) {
    const found =
      b.roleRef.kind === 'ClusterRole'
        ? builtinRoles.has(b.roleRef.name) || policy.roles.some((r) => r.kind === 'ClusterRole' && r.name === b.roleRef.name)
        : policy.roles.some((r) => r.kind === 'Role' && r.namespace === b.namespace && r.name === b.roleRef.name);
    if (!found && b.roleRef.name !== '')
      errs.add(
        `${b.kind} ${b.namespace ? `${b.namespace}/` : ''}${b.name}`,
        `roleRef: ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} not found${b.roleRef.kind === 'Role' ? ` in namespace ${JSON.stringify(b.namespace)}` : ''}`,
      );
  }
  if (errs.lines.length > 0) throw new InvalidArgumentError(errs.lines.join('\n'));
  return policy;
}
