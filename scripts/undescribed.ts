// `npm run schema:undescribed [pattern]`: the coordinates of the graph without a description.
import { getSchema } from '../src/schema/index.ts';
import { undescribed } from '../src/schema/descriptions.ts';

const pattern = process.argv[2] ? new RegExp(process.argv[2]) : null;
const missing = undescribed(getSchema()).filter((coordinate) => !pattern || pattern.test(coordinate));
for (const coordinate of missing) console.log(coordinate);
console.error(`${missing.length} undescribed`);
