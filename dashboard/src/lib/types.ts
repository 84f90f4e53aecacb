/**
 * The shapes of the collector's `/api/v1` answers this page reads, derived from the routes' response schemas: a
 * schema change that the page no longer fits is a type error here. Type-only imports: no collector code is bundled.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { alertsSchema } from '../../../collector/http/api/v1/alerts/schema.js';
import type { buildsSchema } from '../../../collector/http/api/v1/builds/schema.js';
import type { changesSchema } from '../../../collector/http/api/v1/changes/schema.js';
import type { examplesSchema } from '../../../collector/http/api/v1/examples/schema.js';
import type { instancesSchema } from '../../../collector/http/api/v1/instances/schema.js';
import type { matrixSchema } from '../../../collector/http/api/v1/matrix/schema.js';
import type { matrixCellSchema } from '../../../collector/http/api/v1/matrix-cell/schema.js';
import type { rejectionsSchema } from '../../../collector/http/api/v1/rejections/schema.js';
import type { timeseriesSchema } from '../../../collector/http/api/v1/timeseries/schema.js';
import type {
  clientsSchema as clientTrendSchema,
  declarationsSchema,
  extensionsSchema as extensionTrendSchema,
  requiredSchema as requiredTrendSchema,
} from '../../../collector/http/api/v1/trends/schema.js';

/** The body of a route's 200 answer. */
type Answer<Route extends { readonly response: { readonly 200: JSONSchema } }> = FromSchema<Route['response'][200]>;

export type MatrixResponse = Answer<typeof matrixSchema>;
export type MatrixRow = MatrixResponse['rows'][number];
/** One matrix cell's counts (`serverUnknown`: of `clientDeclared`, the requests answered before any server instance existed). */
export type ExtensionCounts = MatrixRow['extensions'][number];

/** One cell split across the instances that answered it (`GET /api/v1/matrix/cell`). */
export type InstanceSplitResponse = Answer<typeof matrixCellSchema>;

export type InstancesResponse = Answer<typeof instancesSchema>;
export type InstanceView = InstancesResponse['instances'][number];

export type BuildsResponse = Answer<typeof buildsSchema>;
export type BuildView = BuildsResponse['builds'][number];

export type TimeseriesResponse = Answer<typeof timeseriesSchema>;

export type DeclarationTrend = Answer<typeof declarationsSchema>;
export type ClientTrend = Answer<typeof clientTrendSchema>;
export type ExtensionTrend = Answer<typeof extensionTrendSchema>;
export type RequiredTrend = Answer<typeof requiredTrendSchema>;

export type ExamplesResponse = Answer<typeof examplesSchema>;

export type RejectionsResponse = Answer<typeof rejectionsSchema>;

export type AlertsResponse = Answer<typeof alertsSchema>;
export type AlertView = AlertsResponse['alerts'][number];
export type AlertState = AlertView['state'];

export type ChangesResponse = Answer<typeof changesSchema>;
