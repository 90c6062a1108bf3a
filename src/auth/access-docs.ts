// What each field needs, said in its description from the rules themselves: the root fields' declared
// auth scopes, the relation guards (src/auth/type-guards.ts) and the node lookups. Written once here
// so a description cannot promise one permission while the rule checks another.
import { getNullableType, isListType, isNonNullType, isObjectType, type GraphQLField, type GraphQLSchema } from 'graphql';
import { guardedFields, nodeLookupPermission } from './type-guards.ts';

/** A root field's `authScopes`, as Pothos keeps its options in the built field's extensions. */
interface DeclaredScopes {
  public?: boolean;
  authenticated?: boolean;
  permission?: string;
}

function declaredScopes(field: GraphQLField<unknown, unknown>): DeclaredScopes | undefined {
  const options = (field.extensions as { pothosOptions?: { authScopes?: unknown } } | undefined)?.pothosOptions;
  const scopes = options?.authScopes;
  return scopes && typeof scopes === 'object' ? (scopes as DeclaredScopes) : undefined;
}

/** The sentence a root field's description ends with. */
function rootAccessSentence(scopes: DeclaredScopes | undefined): string | null {
  if (scopes?.permission) return `Needs the \`${scopes.permission}\` permission.`;
  if (scopes?.authenticated) return 'Needs an API key (any permission).';
  if (scopes?.public) return 'Public: no API key needed.';
  return null;
}

function appendSentence(description: string | null | undefined, sentence: string): string {
  const text = (description ?? '').trim();
  if (text.includes(sentence)) return text;
  return text === '' ? sentence : `${text}${/[.!?)]$/.test(text) ? '' : '.'} ${sentence}`;
}

/** Adds to every root field, guarded relation and node lookup the permission it needs. */
export function describeAccess(schema: GraphQLSchema): GraphQLSchema {
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    if (!root) continue;
    for (const field of Object.values(root.getFields())) {
      if (field.name === 'node' || field.name === 'nodes') {
        field.description = appendSentence(
          field.description,
          'Needs an API key; each type needs its own read permission, as the type’s description says.',
        );
        continue;
      }
      const sentence = rootAccessSentence(declaredScopes(field));
      if (sentence) field.description = appendSentence(field.description, sentence);
    }
  }
  for (const { field, permission } of guardedFields(schema)) {
    // What guardFieldsByType answers without the permission: a non-null list is empty, the rest null.
    const denied = isNonNullType(field.type) && isListType(getNullableType(field.type)) ? 'Empty' : 'Null';
    field.description = appendSentence(field.description, `${denied} without the \`${permission}\` permission.`);
  }
  for (const [typeName, permission] of Object.entries(nodeLookupPermission)) {
    const type = schema.getType(typeName);
    if (type && isObjectType(type) && type.getInterfaces().some((iface) => iface.name === 'Node')) {
      type.description = appendSentence(type.description, `Fetching it by \`node(id:)\` needs the \`${permission}\` permission.`);
    }
  }
  return schema;
}
