// Spec 4.18: the ad-click redirect, public: browsers follow ads without a key. REST answers a 302 to the location.
import { builder } from './builder.ts';
import { carRedirectLocation } from '../domain/redirects.ts';

const CarRedirect = builder.objectRef<{ location: string }>('CarRedirect').implement({
  description: 'Where the browser is sent: always on the origin of the named website.',
  fields: (t) => ({ location: t.exposeString('location', { description: 'The absolute URL of the car’s page on the website.' }) }),
});

builder.queryField('car_redirect', (t) =>
  t.field({
    type: CarRedirect,
    description:
      "The page of the dealership's car with this stock number on the website (id, slug or custom slug); the website's " +
      'stock listing when no car has it, or the car is sold or hidden. 404 for an unknown dealership or a website not of it.',
    authScopes: { public: true },
    args: {
      dealership_slug: t.arg.string({ required: true, description: 'The car’s dealership, by slug.' }),
      website_id: t.arg.string({ required: true, description: 'Website id, slug or custom slug.' }),
      stocknum: t.arg.string({ required: true, description: 'Stock number.' }),
      fbclid: t.arg.string({ description: 'Carried through to the target URL.' }),
    },
    // Public: no key, so no scope; the escape hatch reads only the named dealership's website and car.
    resolve: async (_root, args, context) => ({ location: await carRedirectLocation(context.unscopedDb, args) }),
  }),
);
