// docs/permissions.md's permission table, docs/errors.md's input limits and docs/graphql.md's record
// variants, rendered from the closed lists and type options the code declares.
import { accessOfField } from '../../src/auth/field-access.ts';
import { permissionCatalogue, type Permission } from '../../src/auth/permissions.ts';
import { isObjectType } from 'graphql';
import type { RecordVariant } from '../../src/schema/record-plugin.ts';
import { getSchema } from '../../src/schema/index.ts';
import { DEFAULT_TEXT_MAX_LENGTH, TEXT_MAX_LENGTHS } from '../../src/domain/input-limits.ts';

/** The root fields of the graph (both doors' operations) that need `permission`. */
function rootFieldsNeeding(permission: Permission): string[] {
  const schema = getSchema();
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((root) =>
    Object.values(root?.getFields() ?? {})
      .filter((field) => accessOfField(field).permissions.includes(permission))
      .map((field) => `\`${field.name}\``),
  );
}

export const permissionsTable = (): string =>
  [
    '| Permission | Governs | Root fields |',
    '|---|---|---|',
    ...Object.entries(permissionCatalogue).map(
      ([name, governs]) => `| \`${name}\` | ${governs} | ${rootFieldsNeeding(name as Permission).join(', ')} |`,
    ),
  ].join('\n');

export function inputLimitsTable(): string {
  const fieldsByLimit = new Map<number, string[]>();
  for (const [field, limit] of Object.entries(TEXT_MAX_LENGTHS))
    fieldsByLimit.set(limit, [...(fieldsByLimit.get(limit) ?? []), `\`${field}\``]);
  return [
    '| Field | Maximum characters |',
    '|---|---|',
    ...[...fieldsByLimit].map(([limit, fields]) => `| ${fields.join(', ')} | ${limit.toLocaleString('en')} |`),
    `| any other text (ids, slugs, stock numbers, codes, categories, path parameters …) | ${DEFAULT_TEXT_MAX_LENGTH} |`,
  ].join('\n');
}

/** Every second type of a record, with its `variantOf` reason, by name. */
export function recordVariantsTable(): string {
  const variants = Object.values(getSchema().getTypeMap()).flatMap((type) => {
    const variant = isObjectType(type) ? (type.extensions as { variantOf?: RecordVariant }).variantOf : undefined;
    return variant ? [{ name: type.name, ...variant }] : [];
  });
  return [
    "| Type | Record | Why it is not the record's type |",
    '|---|---|---|',
    ...variants.sort((a, b) => a.name.localeCompare(b.name)).map(({ name, record, reason }) => `| \`${name}\` | ${record} | ${reason} |`),
  ].join('\n');
}
