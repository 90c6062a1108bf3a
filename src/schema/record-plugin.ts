// The service's rules, applied while Pothos builds each type and field: a record's `readPermission`
// guards relations to it and its node lookups, a subscription field needs its record's, every write
// runs under its Idempotency-Key, and every description says what access a field needs and is filled
// from the glossary and the Relay texts where the declaration left it out.
// Scope-auth's type-level authScopes fail each field of the type; a guarded relation answers null instead.
import SchemaBuilder, {
  BasePlugin,
  type PothosInputFieldConfig,
  type PothosOutputFieldConfig,
  type PothosOutputFieldType,
  type PothosTypeConfig,
  type SchemaTypes,
} from '@pothos/core';
import type { GraphQLFieldResolver, GraphQLSchema } from 'graphql';
import type { Permission } from '../auth/permissions.ts';
import { declareReadPermission, guardNodeLookup, guardRelation } from '../auth/record-access.ts';
import { describedOrFromGlossary } from './glossary.ts';
import { checkKeyExceptions, keyedWrite } from './idempotent-writes.ts';

/** On a type or field: the permission its relations and `node(id:)` are guarded by (tests walk it too). */
interface RelationGuard {
  guardedBy: Permission;
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      records: RecordPlugin<Types>;
    }
    export interface ObjectTypeOptions<Types extends SchemaTypes = SchemaTypes, Shape = unknown> {
      /** What reading this record needs: through a relation, `node(id:)`, its subscription and webhooks. */
      readPermission?: Permission;
      /** Why relations to it are not guarded. */
      readAlongItsHolder?: string;
      /** A record's second type: which record, and why the record's own type cannot answer here. */
      variantOf?: RecordVariant;
    }
  }
}

export interface RecordVariant {
  record: string;
  reason: string;
}

type Declaration = Pick<PothosSchemaTypes.ObjectTypeOptions, 'readPermission' | 'readAlongItsHolder' | 'variantOf'>;

const ROOTS = new Set(['Query', 'Mutation', 'Subscription']);

/** The most records a root list's `totalCount` counts. */
export const TOTAL_COUNT_CAP = 10_000;

// The Relay plugin's texts that name their node type, which its options cannot.
const connectionTexts = (nodeType: string, capped: boolean) => ({
  type: `A page of ${nodeType} records, with the cursors to ask for the next or previous page.`,
  edges: `The ${nodeType} records of this page, each with its cursor.`,
  totalCount: capped
    ? `How many records the list holds over all its pages, counted up to ${TOTAL_COUNT_CAP.toLocaleString('en')} (totalCountCapped says when there are more).`
    : 'How many records the whole list holds, over all its pages.',
});

const edgeTexts = (nodeType: string) => ({ type: `One ${nodeType} of a page, with its cursor.`, node: `The ${nodeType}.` });

function appendSentence(description: string | null | undefined, sentence: string): string {
  const text = (description ?? '').trim();
  if (text.includes(sentence)) return text;
  return text === '' ? sentence : `${text}${/[.!?)]$/.test(text) ? '' : '.'} ${sentence}`;
}

/** The sentence a root field's description ends with, from its `authScopes`. */
function rootAccessSentence(scopes: { public?: boolean; authenticated?: boolean; permission?: string } | undefined): string | null {
  if (scopes?.permission) return `Needs the \`${scopes.permission}\` permission.`;
  if (scopes?.authenticated) return 'Needs an API key (any permission).';
  if (scopes?.public) return 'Public: no API key needed.';
  return null;
}

type Resolver<Types extends SchemaTypes> = GraphQLFieldResolver<unknown, Types['Context'], object>;

class RecordPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  private readonly nodeTypes = new Map<string, Permission>();
  private byModel: Map<string, Declaration> | undefined;

  private config(name: string): PothosTypeConfig {
    return this.builder.configStore.getTypeConfig(name);
  }

  private fieldTypeName(type: PothosOutputFieldType<Types>): string | null {
    const inner = type.kind === 'List' ? type.type : type;
    return inner.kind === 'Object' || inner.kind === 'Interface' ? this.builder.configStore.getTypeConfig(inner.ref).name : null;
  }

  private fieldsOf(name: string): Map<string, PothosOutputFieldConfig<Types>> {
    const kind = this.config(name).graphqlKind;
    return kind === 'Object' || kind === 'Interface' ? this.builder.configStore.getFields(name) : new Map();
  }

  /** A connection's node type, for a Relay connection type ({ edges: [{ node }], pageInfo }). */
  private connectionNode(name: string): string | null {
    const fields = this.fieldsOf(name);
    const edges = fields.get('edges');
    if (!name.endsWith('Connection') || !edges || !fields.has('pageInfo')) return null;
    const edge = this.fieldTypeName(edges.type);
    const node = edge ? this.fieldsOf(edge).get('node') : undefined;
    return node ? this.fieldTypeName(node.type) : null;
  }

  private edgeNode(name: string): string | null {
    const fields = this.fieldsOf(name);
    const node = fields.get('node');
    return name.endsWith('Edge') && node && fields.has('cursor') ? this.fieldTypeName(node.type) : null;
  }

  /** The Relay texts naming a connection's or an edge's node type, for its type and fields. */
  private relayTexts(name: string): Record<string, string> | null {
    const connectionOf = this.connectionNode(name);
    if (connectionOf) return connectionTexts(connectionOf, this.fieldsOf(name).has('totalCountCapped'));
    const edgeOf = this.edgeNode(name);
    return edgeOf ? edgeTexts(edgeOf) : null;
  }

  /** A type's own declaration or, for a variant of a Prisma model, the model's. */
  private declarationOf(name: string): Declaration {
    const config = this.config(name);
    const own = config.pothosOptions as Declaration;
    if (own.readPermission) return own;
    const model = (config.extensions as { pothosPrismaModel?: string } | undefined)?.pothosPrismaModel;
    if (!this.byModel) {
      this.byModel = new Map();
      for (const other of this.builder.configStore.typeConfigs.values()) {
        const otherModel = (other.extensions as { pothosPrismaModel?: string } | undefined)?.pothosPrismaModel;
        const declared = other.pothosOptions as Declaration;
        if (!otherModel || !declared.readPermission) continue;
        const before = this.byModel.get(otherModel);
        if (before && before.readPermission !== declared.readPermission) {
          throw new Error(
            `${other.name} declares ${declared.readPermission} for ${otherModel}, which another type declares ${before.readPermission}`,
          );
        }
        this.byModel.set(otherModel, declared);
      }
    }
    return (model && this.byModel.get(model)) || {};
  }

  /** The permission relations to this type need, if any. */
  private relationPermission(name: string): Permission | undefined {
    if ((this.config(name).extensions as { answeredByItsRoot?: string } | undefined)?.answeredByItsRoot) return undefined;
    const declared = this.declarationOf(name);
    return declared.readAlongItsHolder ? undefined : declared.readPermission;
  }

  override onTypeConfig(typeConfig: PothosTypeConfig): PothosTypeConfig {
    if (typeConfig.kind !== 'Object') return typeConfig;
    const { readPermission, variantOf } = typeConfig.pothosOptions as Declaration;
    if (readPermission) declareReadPermission(typeConfig.name, readPermission);
    let description = typeConfig.description;
    if (typeConfig.interfaces.some((ref) => this.builder.configStore.getTypeConfig(ref).name === 'Node')) {
      if (!readPermission) throw new Error(`${typeConfig.name} implements Node without a readPermission`);
      this.nodeTypes.set(typeConfig.name, readPermission);
      description = appendSentence(description, `Fetching it by \`node(id:)\` needs the \`${readPermission}\` permission.`);
    }
    const relayTexts = this.relayTexts(typeConfig.name);
    if (relayTexts) description ||= relayTexts.type;
    const guardedBy = this.relationPermission(typeConfig.name);
    const extensions = { ...typeConfig.extensions, ...(guardedBy && { guardedBy }), ...(variantOf && { variantOf }) };
    return { ...typeConfig, description, extensions };
  }

  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const config = { ...fieldConfig, description: describedOrFromGlossary(fieldConfig.name, fieldConfig.description) };
    const parent = config.parentType;
    const returned = this.fieldTypeName(config.type);
    const connectionNode = returned ? this.connectionNode(returned) : null;
    if (ROOTS.has(parent)) {
      if (parent === 'Query' && (config.name === 'node' || config.name === 'nodes')) {
        const sentence = 'Needs an API key; each type needs its own read permission, as the type’s description says.';
        return { ...config, description: appendSentence(config.description, sentence) };
      }
      const options = config.pothosOptions as { authScopes?: unknown };
      if (parent === 'Subscription' && !options.authScopes && returned) {
        const permission = this.declarationOf(returned).readPermission;
        if (!permission) throw new Error(`Subscription.${config.name} answers ${returned}, which declares no readPermission`);
        config.pothosOptions = { ...config.pothosOptions, authScopes: { permission } } as typeof config.pothosOptions;
      }
      const scopes = (config.pothosOptions as { authScopes?: unknown }).authScopes;
      const sentence = rootAccessSentence(typeof scopes === 'object' && scopes !== null ? scopes : undefined);
      return sentence ? { ...config, description: appendSentence(config.description, sentence) } : config;
    }
    const relayTexts = this.relayTexts(parent);
    if (relayTexts) {
      config.description ||= relayTexts[config.name];
      return config;
    }
    const permission = (returned && this.relationPermission(returned)) || (connectionNode && this.relationPermission(connectionNode));
    if (!permission) return config;
    const isList = config.type.kind === 'List';
    if (!isList && !config.type.nullable) {
      throw new Error(`${parent}.${config.name} returns ${returned}, guarded by ${permission}: it must be nullable`);
    }
    const denied = isList && !config.type.nullable ? 'Empty' : 'Null';
    const guard: RelationGuard = { guardedBy: permission };
    return {
      ...config,
      description: appendSentence(config.description, `${denied} without the \`${permission}\` permission.`),
      extensions: { ...config.extensions, ...guard },
    };
  }

  override onInputFieldConfig(fieldConfig: PothosInputFieldConfig<Types>): PothosInputFieldConfig<Types> {
    if (fieldConfig.kind !== 'InputObject') return fieldConfig;
    return { ...fieldConfig, description: describedOrFromGlossary(fieldConfig.name, fieldConfig.description) };
  }

  override wrapArgMappers(resolver: Resolver<Types> | undefined, fieldConfig: PothosOutputFieldConfig<Types>): Resolver<Types> | undefined {
    if (!resolver) return resolver;
    const resolve = resolver as Parameters<typeof guardRelation>[0];
    const { parentType, name } = fieldConfig;
    if (parentType === 'Query' && (name === 'node' || name === 'nodes'))
      return guardNodeLookup(resolve, name, this.nodeTypes) as Resolver<Types>;
    if (parentType === 'Mutation') return keyedWrite(resolver as Parameters<typeof keyedWrite>[0], name) as Resolver<Types>;
    const permission = (fieldConfig.extensions as Partial<RelationGuard> | undefined)?.guardedBy;
    if (!permission) return resolver;
    const denied: [] | null = fieldConfig.type.kind === 'List' && !fieldConfig.type.nullable ? [] : null;
    return guardRelation(resolve, permission, denied) as Resolver<Types>;
  }

  override afterBuild(schema: GraphQLSchema): GraphQLSchema {
    checkKeyExceptions(new Set(Object.keys(schema.getMutationType()?.getFields() ?? {})));
    return schema;
  }
}

SchemaBuilder.registerPlugin('records', RecordPlugin);
