// Spec 4.12 and 4.13: a dealership's contacts (record 2.8). The show and the list name a vehicle's
// model differently (`model` / `raw_model`), so each has its own types: the REST body is every field.
// The spec's contact record always has the first name and each vehicle's rego, so a key that may read
// contacts gets them; the postcode, which the spec leaves nullable, needs read:personal_data too.
import { builder, nodeById, keepNodeIdField } from './builder.ts';
import { personalData } from '../auth/field-guards.ts';
import { CONTACT_PAGING, contactListArgs, contactNotFound, contactWhere } from '../domain/contacts.ts';
import type { ListSize } from './graphql-limits.ts';
import { idOrder, pagedById, type PrismaFieldBuilder } from './field-builders.ts';

function vehicleFields(t: PrismaFieldBuilder<'ContactVehicle'>) {
  return { databaseId: t.exposeInt('id'), make: t.exposeString('make'), year: t.exposeInt('year'), rego: t.exposeString('rego') };
}

const ContactVehicle = builder.prismaObject('ContactVehicle', {
  description: "A contact's vehicle, as the contact show answers it (model name under `model`).",
  fields: (t) => ({ ...vehicleFields(t), model: t.exposeString('model', { description: 'The model name.' }) }),
});

const listForm = "The list form (4.12) has a vehicle's `raw_model`, which the contact's own form does not.";

const ContactListVehicle = builder.prismaObject('ContactVehicle', {
  variant: 'ContactListVehicle',
  variantOf: { record: 'Contact vehicle', reason: listForm },
  description: "A contact's vehicle, as the contact list answers it (model name under `raw_model`).",
  fields: (t) => ({ ...vehicleFields(t), raw_model: t.exposeString('model') }),
});

function contactFields(t: PrismaFieldBuilder<'Contact'>) {
  return { databaseId: t.exposeInt('id'), dealership_id: t.exposeInt('dealership_id'), first_name: t.exposeString('first_name') };
}

const Contact = builder.prismaNode('Contact', {
  readPermission: 'read:contact',
  ...nodeById,
  description: 'A person known to a dealership.',
  fields: (t) => ({
    ...contactFields(t),
    postcode: t.exposeString('postcode', { ...personalData, description: 'Text, so leading zeros (0800) survive; null when unknown.' }),
    vehicles: t.relation('vehicles', { type: ContactVehicle, query: idOrder }),
  }),
});
keepNodeIdField(Contact);

const ContactListEntry = builder.prismaObject('Contact', {
  variant: 'ContactListEntry',
  variantOf: { record: 'Contact', reason: listForm },
  description: 'A contact as the contact list answers it (vehicles with `raw_model`).',
  fields: (t) => ({
    ...contactFields(t),
    postcode: t.exposeString('postcode', personalData),
    vehicles: t.relation('vehicles', { type: ContactListVehicle, query: idOrder }),
  }),
});

builder.queryFields((t) => ({
  contact: t.prismaField({
    type: Contact,
    description: 'One contact of a dealership. 404 dealership_not_found / contact_not_found.',
    authScopes: { permission: 'read:contact' },
    args: {
      dealership_id: t.arg.int({ required: true, description: 'The dealership the contact belongs to.' }),
      id: t.arg.int({ required: true, description: 'The contact’s id.' }),
    },
    resolve: async (query, _root, args, context) => {
      const where = await contactWhere(context.db, args.dealership_id, args.id);
      const contact = await context.db.contact.findFirst({ ...query, where });
      if (!contact) throw contactNotFound();
      return contact;
    },
  }),
  contacts: t.prismaField({
    type: [ContactListEntry],
    description:
      `The REST operation's shape: a page of a dealership's contacts, by id, as an array: page ≥ 1 (default 1), per_page 1–200 (default 50); ` +
      'deep pages cost less with after_id (the contacts after that id, at any depth, page counted from there). ' +
      'Graph clients page them with the connection `dealership(id:) { contacts }`, which counts them too.',
    authScopes: { permission: 'read:contact' },
    extensions: {
      listSize: {
        slicingArgument: 'per_page',
        defaultSize: CONTACT_PAGING.defaultPerPage,
        maxSize: CONTACT_PAGING.maxPerPage,
      } satisfies ListSize,
    },
    args: {
      dealership_id: t.arg.int({ required: true, description: 'The dealership whose contacts to list.' }),
      page: t.arg.int({ description: 'The page to answer, from 1.' }),
      per_page: t.arg.int({ description: 'Contacts per page.' }),
      after_id: t.arg.int({ description: 'The contacts after this id (keyset paging, instead of page): the last id of the page before.' }),
    },
    resolve: async (query, _root, args, context) => context.db.contact.findMany({ ...query, ...(await contactListArgs(context.db, args)) }),
  }),
}));

// The graph's list of a dealership's contacts: a connection like the graph's other lists, where the
// root field `contacts` keeps the REST operation's page/per_page array. Contact is read:contact data
// wherever it is reached, so without it the connection is null; rows and
// count are the scoped client's, so only the key's dealerships' contacts are ever paged or counted.
builder.prismaObjectField('Dealership', 'contacts', (t) =>
  t.relatedConnection('contacts', {
    type: Contact,
    ...pagedById,
    nullable: true,
    description: 'The dealership’s contacts, by id.',
  }),
);
